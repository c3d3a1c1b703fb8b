// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package docs

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"

	"github.com/rocm-ernic/otelcol-ernic/exporter/otlpdurableexporter"
	"github.com/rocm-ernic/otelcol-ernic/exporter/otlphttpdurableexporter"
	"github.com/rocm-ernic/otelcol-ernic/exporter/prometheustextexporter"
	"github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"
	"github.com/rocm-ernic/otelcol-ernic/extension/queuestorageextension"
	"github.com/rocm-ernic/otelcol-ernic/receiver/selftelemetryreceiver"
)

// Each exporter's, the selftelemetry receiver's and the queue_storage
// extension's README documents every
// top-level setting of its configuration in its configuration table, and
// names no setting the configuration does not have: a setting added or
// renamed without its README fails here.
func TestComponentREADMEConfigTablesMatchConfigs(t *testing.T) {
	for _, c := range []struct {
		readme string
		config component.Config
		// settings the test expects in any case, so that a broken
		// reflection (no keys at all) cannot pass
		must []string
	}{
		{"../../exporter/prometheustextexporter/README.md", prometheustextexporter.NewFactory().CreateDefaultConfig(), []string{"endpoint", "metric_expiration", "resource_to_telemetry_conversion"}},
		{"../../exporter/remotewriteexporter/README.md", remotewriteexporter.NewFactory().CreateDefaultConfig(), []string{"endpoint", "headers", "sending_queue", "max_samples_per_send", "protobuf_message"}},
		{"../../exporter/otlpdurableexporter/README.md", otlpdurableexporter.NewFactory().CreateDefaultConfig(), []string{"endpoint", "timeout", "keepalive", "merge_window"}},
		{"../../exporter/otlphttpdurableexporter/README.md", otlphttpdurableexporter.NewFactory().CreateDefaultConfig(), []string{"endpoint", "metrics_endpoint", "encoding", "compression"}},
		{"../../receiver/selftelemetryreceiver/README.md", selftelemetryreceiver.NewFactory().CreateDefaultConfig(), []string{"collection_interval", "host_name", "metrics", "resource_attributes"}},
		{"../../extension/queuestorageextension/README.md", queuestorageextension.NewFactory().CreateDefaultConfig(), []string{"directory", "fsync", "set_aside"}},
	} {
		t.Run(filepath.Base(filepath.Dir(c.readme)), func(t *testing.T) {
			typ := reflect.TypeOf(c.config)
			keys := topLevelKeys(typ)
			for _, k := range c.must {
				require.Contains(t, keys, k)
			}

			readme, err := os.ReadFile(c.readme)
			require.NoError(t, err)
			documented := configTableKeys(t, string(readme))
			var top []string
			for _, k := range documented {
				path := strings.Split(k, "::")
				assert.Truef(t, hasKeyPath(typ, path), "%s: the configuration table names %q, which the Config does not have", c.readme, k)
				if !slices.Contains(top, path[0]) {
					top = append(top, path[0])
				}
			}
			slices.Sort(top)
			assert.Equal(t, keys, top, "%s: top-level keys of the Config (left) and of the configuration table (right)", c.readme)
		})
	}
}

// configTableKeys returns the settings named in the first cell of the rows
// of the README's "## Configuration" section: backquoted keys separated by
// commas, nested keys written a::b.
func configTableKeys(t *testing.T, readme string) []string {
	_, section, ok := strings.Cut(readme, "\n## Configuration\n")
	require.True(t, ok, "no ## Configuration section")
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	key := "`[a-z0-9_]+(?:::[a-z0-9_]+)*`"
	var keys []string
	for _, row := range regexp.MustCompile("(?m)^\\| ("+key+"(?:, "+key+")*) \\|").FindAllStringSubmatch(section, -1) {
		for _, k := range regexp.MustCompile("`([a-z0-9_:]+)`").FindAllStringSubmatch(row[1], -1) {
			keys = append(keys, k[1])
		}
	}
	require.NotEmpty(t, keys, "no setting in the configuration table")
	return keys
}

// topLevelKeys returns, sorted, the mapstructure keys of the struct typ is
// or points to, with the keys of squash-embedded structs in their place.
func topLevelKeys(typ reflect.Type) []string {
	var keys []string
	for name := range fields(typ) {
		keys = append(keys, name)
	}
	slices.Sort(keys)
	return keys
}

// hasKeyPath reports whether the nested key path (a::b as [a b]) exists
// in typ: each element a mapstructure key of the struct before it, through
// pointers and configoptional.Optional (which takes `enabled` too), and
// anything under a map.
func hasKeyPath(typ reflect.Type, path []string) bool {
	for i, k := range path {
		if k == "enabled" && i == len(path)-1 && isOptional(deref1(typ)) {
			return true
		}
		typ = deref(typ)
		if typ.Kind() == reflect.Map {
			return true
		}
		if typ.Kind() != reflect.Struct {
			return false
		}
		next, ok := fields(typ)[k]
		if !ok {
			return false
		}
		typ = next
	}
	return true
}

// fields maps the mapstructure keys of the struct typ is or points to to
// their types, squash-embedded structs flattened in.
func fields(typ reflect.Type) map[string]reflect.Type {
	typ = deref(typ)
	out := map[string]reflect.Type{}
	if typ.Kind() != reflect.Struct {
		return out
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("mapstructure")
		name, opts, _ := strings.Cut(tag, ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if slices.Contains(strings.Split(opts, ","), "squash") {
			for k, v := range fields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

// deref follows pointers and configoptional.Optional to the value's type.
func deref(typ reflect.Type) reflect.Type {
	for {
		typ = deref1(typ)
		if !isOptional(typ) {
			return typ
		}
		f, _ := typ.FieldByName("value")
		typ = f.Type
	}
}

// deref1 follows pointers.
func deref1(typ reflect.Type) reflect.Type {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	return typ
}

// isOptional reports whether typ is a configoptional.Optional.
func isOptional(typ reflect.Type) bool {
	return typ.Kind() == reflect.Struct && typ.PkgPath() == "go.opentelemetry.io/collector/config/configoptional" && strings.HasPrefix(typ.Name(), "Optional[")
}

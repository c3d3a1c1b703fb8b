// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// componentKinds are the component lists of a collector configuration and
// of `otelcol-ernic components`.
var componentKinds = []string{"receivers", "processors", "exporters", "extensions"}

// compatibilityExtensions are built in though no configuration in config/
// uses them: file_storage, for configurations copied from the packages
// before queue_storage (TestFileStorageConfigDeliversAcrossRestart).
var compatibilityExtensions = []string{"file_storage"}

// TestDistributionHasOnlyShippedComponents: the binary's components
// (`otelcol-ernic components`) are exactly those that the configurations
// in config/ use, and compatibilityExtensions: every component in the build
// adds dependencies to it, so one that no shipped configuration uses
// belongs in the test build (the Makefile's otelcol-test), not here.
// TestValidateConfigs checks that each configuration runs on the build.
func TestDistributionHasOnlyShippedComponents(t *testing.T) {
	bin := harness.CollectorBinary(t)
	root := harness.RepoRoot(t)
	configs, err := filepath.Glob(filepath.Join(root, "config", "*.yaml"))
	if err != nil || len(configs) == 0 {
		t.Fatalf("no config/*.yaml: %v", err)
	}
	used := map[string][]string{}
	for _, c := range configs {
		var cfg map[string]any
		data, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, &cfg); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		for _, kind := range componentKinds {
			section, _ := cfg[kind].(map[string]any)
			for id := range section {
				typ, _, _ := strings.Cut(id, "/")
				if !slices.Contains(used[kind], typ) {
					used[kind] = append(used[kind], typ)
				}
			}
		}
	}

	out, err := exec.Command(bin, "components").Output()
	if err != nil {
		t.Fatalf("%s components: %v", bin, err)
	}
	var built map[string]any
	if err := yaml.Unmarshal(out, &built); err != nil {
		t.Fatalf("components output: %v\n%s", err, out)
	}
	for _, kind := range componentKinds {
		var have []string
		list, _ := built[kind].([]any)
		for _, c := range list {
			if m, ok := c.(map[string]any); ok {
				if name, ok := m["name"].(string); ok {
					have = append(have, name)
				}
			}
		}
		want := used[kind]
		if kind == "extensions" {
			want = append(want, compatibilityExtensions...)
		}
		slices.Sort(have)
		slices.Sort(want)
		t.Logf("%s: built %v, used by config/ (or kept for compatibility) %v", kind, have, want)
		for _, w := range want {
			if !slices.Contains(have, w) {
				t.Errorf("%s: config/ uses %s, the build lacks it", kind, w)
			}
		}
		for _, h := range have {
			if !slices.Contains(want, h) {
				t.Errorf("%s: %s is built in but no configuration in config/ uses it", kind, h)
			}
		}
	}
}

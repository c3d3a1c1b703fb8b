// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package docs

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/rocm-ernic/otelcol-ernic/exporter/remotewriteexporter"
)

// The HTTP statuses that remote_write's documentation says drop a request
// (rejected) and those it says are retried are the ones the exporter drops
// and retries: every 4xx and 5xx answered to a remote write 1.0 request,
// with retry_on_auth_errors off and on.
func TestRemoteWriteStatusesAsDocumented(t *testing.T) {
	readme := section(t, "../../exporter/remotewriteexporter/README.md", "\n## Delivery\n")
	rejected := codesBut(t, readme, `\*\*(\d)xx but ([0-9, and]+)\*\*`)
	retried := codeList(t, readme, `\*\*([0-9x, ]+), connection errors and timeouts\*\*: retried`)
	auth := codeList(t, readme, "`retry_on_auth_errors: true`, ([0-9x, and]+) are retried instead")
	for code := range rejected {
		require.False(t, retried[code], "the README has %d both rejected and retried", code)
	}

	// The other statements of the same rules.
	for file, re := range map[string]string{
		"../../config/prometheus-remote-write.yaml": `rejected \(any (\d)xx but (\d{3}),`,
		"../../docs/operations.md":                  `every (\d)xx answer but (\d{3}) drops`,
	} {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Empty(t, differ(rejected, codesBut(t, string(b), re)), "%s: codes rejected by the README and not here, or here and not by the README", file)
	}

	for _, retryOnAuth := range []bool{false, true} {
		for code := 400; code < 600; code++ {
			want := "retried"
			if rejected[code] && !(retryOnAuth && auth[code]) {
				want = "rejected"
			}
			require.True(t, want == "rejected" || retried[code] || (retryOnAuth && auth[code]),
				"the README says nothing of %d", code)
			got := "retried"
			if attempts := sendOnce(t, code, retryOnAuth); attempts == 1 {
				got = "rejected"
			}
			assert.Equal(t, want, got, "HTTP %d, retry_on_auth_errors %v", code, retryOnAuth)
		}
	}
}

// differ returns the codes in one set and not in the other, sorted.
func differ(a, b map[int]bool) []int {
	var d []int
	for code := 100; code < 1000; code++ {
		if a[code] != b[code] {
			d = append(d, code)
		}
	}
	return d
}

// section returns the part of a markdown file from heading to the next
// heading of the same level.
func section(t *testing.T, file, heading string) string {
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	_, s, ok := strings.Cut(string(b), heading)
	require.True(t, ok, "%s: no %q", file, heading)
	if end := strings.Index(s, "\n## "); end >= 0 {
		s = s[:end]
	}
	return s
}

// codesBut reads "<d>xx but <codes>" with re (two groups) into the set it
// names: every code of the class but the exceptions.
func codesBut(t *testing.T, text, re string) map[int]bool {
	m := regexp.MustCompile(re).FindStringSubmatch(text)
	require.NotNil(t, m, "no %s", re)
	set := expand(t, m[1]+"xx")
	for code := range expand(t, m[2]) {
		delete(set, code)
	}
	return set
}

// codeList reads a list of codes and classes ("429, 5xx", "401 and 403")
// with re (one group).
func codeList(t *testing.T, text, re string) map[int]bool {
	m := regexp.MustCompile(re).FindStringSubmatch(text)
	require.NotNil(t, m, "no %s", re)
	return expand(t, m[1])
}

func expand(t *testing.T, list string) map[int]bool {
	set := map[int]bool{}
	for _, f := range strings.FieldsFunc(strings.ReplaceAll(list, " and ", ","), func(r rune) bool { return r == ',' || r == ' ' }) {
		if class, ok := strings.CutSuffix(f, "xx"); ok {
			d, err := strconv.Atoi(class)
			require.NoError(t, err, f)
			for code := d * 100; code < d*100+100; code++ {
				set[code] = true
			}
			continue
		}
		code, err := strconv.Atoi(f)
		require.NoError(t, err, f)
		set[code] = true
	}
	return set
}

// sendOnce sends one batch with remote_write, without a queue, to an
// endpoint that answers code to the first request and 204 afterwards, and
// returns how many requests it got: 1 when the answer dropped the request,
// 2 when it was retried.
func sendOnce(t *testing.T, code int, retryOnAuth bool) int32 {
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if attempts.Add(1) == 1 {
			w.WriteHeader(code)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	f := remotewriteexporter.NewFactory()
	cfg := f.CreateDefaultConfig().(*remotewriteexporter.Config)
	cfg.Endpoint = srv.URL
	cfg.RetryOnAuthErrors = retryOnAuth
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.BackOffConfig.InitialInterval = time.Millisecond
	cfg.BackOffConfig.MaxInterval = time.Millisecond
	cfg.BackOffConfig.MaxElapsedTime = 10 * time.Second
	require.NoError(t, cfg.Validate())
	exp, err := f.CreateMetrics(context.Background(), exportertest.NewNopSettings(component.MustNewType("remote_write")), cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, exp.Shutdown(context.Background())) }()

	md := pmetric.NewMetrics()
	g := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	g.SetName("ernic.status.test")
	p := g.SetEmptyGauge().DataPoints().AppendEmpty()
	p.SetTimestamp(pcommon.NewTimestampFromTime(time.Now()))
	p.SetIntValue(1)
	require.NoError(t, exp.ConsumeMetrics(context.Background(), md), fmt.Sprintf("HTTP %d", code))
	return attempts.Load()
}

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// prometheus3Binary returns a Prometheus 3 server (its OTLP receiver is not
// in Debian's 2.42): $PROMETHEUS3_BIN, else bin/prometheus3, which
// `make prometheus3` builds from the Go module proxy (`make e2e-test` and
// so `make test` do, once). The fleet test fails, never skips, without it.
func prometheus3Binary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PROMETHEUS3_BIN"); p != "" {
		return p
	}
	p := filepath.Join(repoRoot(t), "bin", "prometheus3")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the fleet test needs Prometheus 3: run `make prometheus3` (it builds bin/prometheus3) or set PROMETHEUS3_BIN: %v", err)
	}
	return p
}

// launchPrometheus starts the Prometheus server bin on a free loopback
// port with the configuration text conf, a TSDB of its own and the extra
// flags, waits until it is ready and stops it when the test ends.
func launchPrometheus(t *testing.T, bin, conf string, flags ...string) *promServer {
	t.Helper()
	p := &promServer{t: t, bin: bin, port: freePort(t), dir: t.TempDir(), log: &lockedBuffer{}}
	p.conf = filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(p.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{
		"--config.file=" + p.conf,
		"--storage.tsdb.path=" + p.dir,
		"--web.listen-address=" + fmt.Sprintf("127.0.0.1:%d", p.port),
	}, flags...)
	p.cmd = exec.Command(p.bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.exited = make(chan struct{})
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", p.bin, err)
	}
	cmd, exited := p.cmd, p.exited
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("prometheus %s log:\n%s", bin, p.log.String())
		}
	})
	eventually(t, 60*time.Second, "prometheus "+bin+" ready", func() []string {
		select {
		case <-exited:
			t.Fatalf("prometheus %s exited before it was ready:\n%s", bin, p.log.String())
		default:
		}
		resp, err := http.Get(p.url("/-/ready"))
		if err != nil {
			return []string{err.Error()}
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return []string{resp.Status}
		}
		return nil
	})
	return p
}

// requestsNot2xx returns the requests a Prometheus answered on handler
// (its own prometheus_http_requests_total) with a code other than 2xx, as
// "code: count".
func (p *promServer) requestsNot2xx(t *testing.T, handler string) []string {
	t.Helper()
	resp, err := http.Get(p.url("/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	answered := 0.0
	for _, m := range mfs["prometheus_http_requests_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["handler"] != handler {
			continue
		}
		answered += m.GetCounter().GetValue()
		if !strings.HasPrefix(labels["code"], "2") && m.GetCounter().GetValue() > 0 {
			out = append(out, fmt.Sprintf("%s: %v", labels["code"], m.GetCounter().GetValue()))
		}
	}
	if answered == 0 {
		out = append(out, "no request at all on "+handler)
	}
	return out
}

// hostCollector is one otelcol-ernic of a fleet host: started with
// `unshare --uts` and the host's name set in that namespace, so that the
// collector detects it as a real host would (resourcedetection's system
// detector reads the kernel's host name).
type hostCollector struct {
	cmd  *exec.Cmd
	log  *lockedBuffer
	done chan struct{}
}

// startHostCollector starts otelcol-ernic with the configs and the
// environment env on a host called host.
func startHostCollector(t *testing.T, host string, env []string, configs ...string) *hostCollector {
	t.Helper()
	args := []string{"--uts", "--", "sh", "-c", `hostname "$0" && exec "$@"`, host, collectorBinary(t)}
	for _, c := range configs {
		args = append(args, "--config", c)
	}
	c := &hostCollector{cmd: exec.Command("unshare", args...), log: &lockedBuffer{}, done: make(chan struct{})}
	c.cmd.Dir = repoRoot(t)
	c.cmd.Env = append(cleanEnv(), env...)
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("unshare --uts (needs root, as in CI): %v", err)
	}
	go func() { _ = c.cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		c.stop()
		if t.Failed() {
			t.Logf("collector of %s %v log:\n%s", host, configs, c.log.String())
		}
	})
	return c
}

// stop ends the collector with SIGTERM (unshare and sh exec it, so the
// process is the collector's).
func (c *hostCollector) stop() {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(15 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// seriesKey is a sample's family and labels without job and instance, the
// labels a backend adds for the host.
func seriesKey(m model.Metric) string {
	c := m.Clone()
	delete(c, "job")
	delete(c, "instance")
	return c.String()
}

// backendSeries returns the ernic series of the host whose instance label
// is instance in p, by seriesKey, with their values, and the label names
// seen (for the note).
func backendSeries(ctx context.Context, p *promServer, instance string) (map[string]float64, map[string]bool, error) {
	v, err := p.vector(ctx, fmt.Sprintf(`{__name__=~"ernic_.+", instance=%q}`, instance), time.Now())
	if err != nil {
		return nil, nil, err
	}
	out, names := map[string]float64{}, map[string]bool{}
	for _, s := range v {
		out[seriesKey(s.Metric)] = float64(s.Value)
		for k := range s.Metric {
			names[string(k)] = true
		}
	}
	return out, names, nil
}

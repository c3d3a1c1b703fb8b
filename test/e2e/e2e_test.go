//go:build e2e

// Package e2e runs the otelcol-ernic distribution as users run it, with
// config/local.yaml, against a run directory written from fixtures, and
// checks the Prometheus exposition against the metric contract
// (shared/spec/metrics.md): every family present with its type and exact
// label set, and values equal to what the fixture files hold.
//
// Run with `make test` (or `make e2e-test`). The tests are behind the e2e
// build tag so that `go test ./...` stays a unit-test run; they need `make`
// and the collector builder, and fail (never skip) when something is missing.
// OTELCOL_BIN names a collector binary already built; without it the tests
// run `make otelcol` in the repository root.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// opcodeReceiver is the receiver part of the configuration overrides of
// the tests that check every metric: a 1s scrape and the off-by-default
// per-opcode metric on. The metric name has dots, which --set=a::b=c
// splits into keys, so it comes from a file.
const opcodeReceiver = `receivers:
  ernic:
    collection_interval: 1s
    metrics:
      ernic.qp.wqes.by_opcode:
        enabled: true
`

// waitTimeout bounds how long the collector gets to serve the expected
// exposition (the e2e config scrapes every second).
const waitTimeout = 45 * time.Second

// validateEnv is the environment of `otelcol-ernic validate` for the shipped
// configurations: the variables that have no default, set to plausible
// values; every other ${env:...} keeps its default.
var validateEnv = []string{
	"ERNIC_REMOTE_WRITE_URL=http://127.0.0.1:9090/api/v1/write", // prometheus-remote-write.yaml
}

// validateEndpoints is ERNIC_OTLP_ENDPOINT per configuration: host:port for
// gRPC, a URL for HTTP.
var validateEndpoints = map[string]string{
	"otlp.yaml":     "127.0.0.1:4317",
	"otlphttp.yaml": "http://127.0.0.1:4318",
}

// TestValidateConfigs: every configuration in config/ is valid for the
// distribution as it is (defaults of every ${env:...} that has one). The
// configurations that need an endpoint are also checked to fail without it,
// so that a missing variable stops the collector instead of sending nowhere.
func TestValidateConfigs(t *testing.T) {
	bin := harness.CollectorBinary(t)
	root := harness.RepoRoot(t)
	configs, err := filepath.Glob(filepath.Join(root, "config", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range configs {
		names = append(names, filepath.Base(c))
	}
	for _, want := range []string{"local.yaml", "prometheus-remote-write.yaml", "otlp.yaml", "otlphttp.yaml"} {
		if !slices.Contains(names, want) {
			t.Errorf("config/%s missing (have %v)", want, names)
		}
	}
	validate := func(config string, env []string) ([]byte, error) {
		cmd := exec.Command(bin, "validate", "--config", config)
		cmd.Dir = root
		cmd.Env = append(harness.CleanEnv(), env...)
		return cmd.CombinedOutput()
	}
	for _, config := range configs {
		name := filepath.Base(config)
		t.Run(name, func(t *testing.T) {
			env := slices.Clone(validateEnv)
			if ep, ok := validateEndpoints[name]; ok {
				env = append(env, "ERNIC_OTLP_ENDPOINT="+ep)
			}
			if name == "debug.yaml" {
				// An overlay of local.yaml (make run).
				cmd := exec.Command(bin, "validate", "--config", filepath.Join(root, "config", "local.yaml"), "--config", config)
				cmd.Dir, cmd.Env = root, harness.CleanEnv()
				if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
					t.Fatalf("validate local.yaml + debug.yaml: %v\n%s", err, out)
				}
				return
			}
			out, err := validate(config, env)
			if err != nil {
				t.Fatalf("otelcol-ernic validate --config config/%s: %v\n%s", name, err, out)
			}
			if len(bytes.TrimSpace(out)) > 0 {
				t.Errorf("otelcol-ernic validate --config config/%s printed:\n%s", name, out)
			}
			// Without its endpoint, a push configuration must not validate.
			if name != "local.yaml" {
				if out, err := validate(config, nil); err == nil {
					t.Errorf("config/%s validates without its endpoint variable; want an error\n%s", name, out)
				}
			}
		})
	}
}

// startCollector runs the collector with config/local.yaml plus the e2e
// override file, and stops it when the test ends, printing its log if the
// test failed.
func startCollector(t *testing.T, runDir string, promPort, healthPort int) *harness.Process {
	t.Helper()
	root := harness.RepoRoot(t)

	// The overrides of the test, merged over config/local.yaml: a 1s
	// scrape, the off-by-default per-opcode metric on, and every listener
	// on loopback. The metric name has dots, which --set=a::b=c splits
	// into keys, so it comes from a file.
	override := harness.WriteFile(t, "e2e.yaml", fmt.Sprintf(opcodeReceiver+`exporters:
  prometheus_text:
    endpoint: 127.0.0.1:${env:ERNIC_EXPORTER_PORT}
extensions:
  health_check:
    endpoint: 127.0.0.1:%d
`, healthPort))

	return harness.StartCollector(t, []string{
		"--config", filepath.Join(root, "config", "local.yaml"),
		"--config", override,
	}, []string{
		"ERNIC_RUN_DIR=" + runDir,
		"ERNIC_EXPORTER_PORT=" + strconv.Itoa(promPort),
	}, nil, true)
}

// TestPrometheusContract runs the collector on a fixture run directory and
// checks every family of the metric contract and the fixtures' values.
func TestPrometheusContract(t *testing.T) {
	harness.CollectorBinary(t) // build first: the fixture files must be younger than the clock checks below
	runDir := t.TempDir()
	waitPastOwnStart(t)
	now := time.Now()
	insts := fixtures(now)
	writeRunDir(t, runDir, insts)

	promPort, healthPort := harness.FreePort(t), harness.FreePort(t)
	for healthPort == promPort {
		healthPort = harness.FreePort(t)
	}
	c := startCollector(t, runDir, promPort, healthPort)
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", promPort)

	// Poll until the exposition satisfies every check (the first scrapes
	// may predate the collector's first export), then report the last
	// attempt's failures.
	want := expected(insts, now)
	deadline := time.Now().Add(waitTimeout)
	var problems []string
	var mfs map[string]*dto.MetricFamily
	for attempt := 0; ; attempt++ {
		select {
		case <-c.Exited():
			t.Fatalf("collector exited before serving the expected metrics: %v", c.Err())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var err error
		mfs, err = harness.Scrape(ctx, url)
		cancel()
		if err != nil {
			problems = []string{"scrape: " + err.Error()}
		} else {
			problems = check(mfs, want)
		}
		if len(problems) == 0 {
			break
		}
		if time.Now().After(deadline) {
			if mfs != nil {
				t.Logf("last exposition:\n%s", formatFamilies(mfs))
			}
			t.Fatalf("%s did not match the metric contract within %v (%d problems):\n  %s",
				url, waitTimeout, len(problems), strings.Join(problems, "\n  "))
		}
		time.Sleep(250 * time.Millisecond)
	}

	var names []string
	for _, f := range contract {
		names = append(names, f.name)
	}
	t.Logf("all %d families of the metric contract present with their types, labels and fixture values: %s",
		len(contract), strings.Join(names, ", "))

	// The health_check extension answers on its loopback endpoint.
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", healthPort))
	if err != nil {
		t.Errorf("health_check: %v", err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("health_check: %s, want 200 OK", resp.Status)
		}
	}

	// The collector listens on exactly the two loopback endpoints: no
	// telemetry server of its own, nothing on another address.
	listeners, err := tcpListeners(c.Pid())
	if err != nil {
		t.Errorf("listeners of the collector: %v", err)
	} else {
		wantL := []string{
			fmt.Sprintf("127.0.0.1:%d", promPort),
			fmt.Sprintf("127.0.0.1:%d", healthPort),
		}
		sort.Strings(wantL)
		if !slices.Equal(listeners, wantL) {
			t.Errorf("collector listens on %v, want exactly %v", listeners, wantL)
		}
	}
}

// sample is one expected series: its labels and value. A value check other
// than equality is given by within (inclusive bounds).
type sample struct {
	labels map[string]string
	value  float64
	within *[2]float64
}

// expected returns, for each family, the exact series the fixtures must
// produce.
func expected(insts []*instanceFixture, now time.Time) map[string][]sample {
	want := map[string][]sample{}
	add := func(name string, value float64, labels ...string) {
		want[name] = append(want[name], sample{labels: pairs(labels), value: value})
	}
	addWithin := func(name string, lo, hi float64, labels ...string) {
		want[name] = append(want[name], sample{labels: pairs(labels), within: &[2]float64{lo, hi}})
	}
	ownAge := now.Sub(ownStart()).Seconds()
	vms := 0
	for _, f := range insts {
		id, role := strconv.Itoa(f.id), f.role
		idRole := []string{"ernic_id", id, "role", role}
		with := func(more ...string) []string { return append(slices.Clone(idRole), more...) }

		// Instance and VM. Both pids are this test process: alive.
		add("ernic_instance_up", 1, with("mac", f.mac)...)
		addWithin("ernic_instance_uptime_seconds", ownAge-5, ownAge+waitTimeout.Seconds()+30, idRole...)
		if f.vm != nil {
			vms++
			add("ernic_vm_attached", 1, with("vm_name", f.vm.name)...)
			gpu := 0.0
			if f.vm.gpu != "" {
				gpu = 1
			}
			add("ernic_vm_gpu_passthrough", gpu, idRole...)
			age := float64(now.UnixMilli())/1000 - f.vm.launchedAt
			addWithin("ernic_vm_uptime_seconds", age-5, age+waitTimeout.Seconds()+30, idRole...)
		} else {
			add("ernic_vm_attached", 0, with("vm_name", "")...)
		}

		// Device.
		up := 0.0
		if strings.HasPrefix(f.connection, "connected") {
			up = 1
		}
		add("ernic_connection_up", up, with("state", f.connection)...)
		add("ernic_qp_count", float64(len(f.qps)), idRole...)
		add("ernic_qp_unpublished", 0, idRole...)
		add("ernic_labels_truncated", 0, idRole...)
		addWithin("ernic_stats_age_seconds", 0, waitTimeout.Seconds()+30, idRole...)
		add("ernic_stats_writes_total", float64(f.writeCount), idRole...)
		for family, key := range map[string]string{
			"ernic_ip_bytes_tx_total":         "total_ip_bytes_tx",
			"ernic_ip_bytes_rx_total":         "total_ip_bytes_rx",
			"ernic_rdma_bytes_sent_total":     "total_bytes_sent",
			"ernic_rdma_bytes_received_total": "total_bytes_received",
			"ernic_rdma_bytes_read_total":     "total_bytes_rdma_read",
			"ernic_rdma_bytes_write_total":    "total_bytes_rdma_write",
			"ernic_flr_reset_total":           "reset_count",
			"ernic_commands_total":            "commands",
			"ernic_interrupts_total":          "interrupts",
			"ernic_mmio_reads_total":          "mmio_reads_total",
			"ernic_mmio_writes_total":         "mmio_writes_total",
		} {
			add(family, float64(f.dev(key)), idRole...)
		}
		add("ernic_rdma_bytes_total", float64(f.dev("total_bytes_sent")+f.dev("total_bytes_received")+
			f.dev("total_bytes_rdma_read")+f.dev("total_bytes_rdma_write")), idRole...)
		add("ernic_ip_bytes_total", float64(f.dev("total_ip_bytes_tx")+f.dev("total_ip_bytes_rx")), idRole...)
		for _, c := range slices.Concat(f.deviceLIF, f.lif) {
			add("ernic_lif_counter_total", float64(c.value), with("counter", c.name)...)
		}

		// Per QP.
		for _, q := range f.qps {
			qp := with("qp", strconv.FormatUint(uint64(q.handle), 10))
			add("ernic_qp_doorbell_send_total", float64(q.doorbellSend), qp...)
			add("ernic_qp_doorbell_recv_total", float64(q.doorbellRecv), qp...)
			add("ernic_qp_wqes_processed_total", float64(q.wqesProcessed), qp...)
			add("ernic_qp_cqes_posted_total", float64(q.cqesPosted), qp...)
			add("ernic_qp_bytes_sent_total", float64(q.bytesSent), qp...)
			add("ernic_qp_bytes_received_total", float64(q.bytesReceived), qp...)
			add("ernic_qp_bytes_rdma_read_total", float64(q.bytesRDMARead), qp...)
			add("ernic_qp_bytes_rdma_write_total", float64(q.bytesRDMAWrite), qp...)
			for _, op := range q.opcodes {
				add("ernic_qp_wqes_by_opcode_total", float64(op.value), append(slices.Clone(qp), "opcode", op.name)...)
			}
			// A wrapped `(other opcodes)` (above 2^63-1) is not published.
			if q.hasOther && q.other <= math.MaxInt64 {
				add("ernic_qp_wqes_by_opcode_total", float64(q.other), append(slices.Clone(qp), "opcode", "other")...)
			}
		}
	}
	add("ernic_instances", float64(len(insts)))
	add("ernic_vms", float64(vms))
	return want
}

func pairs(kv []string) map[string]string {
	m := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// check compares the exposition with the contract and the expected series;
// it returns every difference found.
func check(mfs map[string]*dto.MetricFamily, want map[string][]sample) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	known := map[string]bool{}
	for _, f := range slices.Concat(contract, beyondContract) {
		known[f.name] = true
		mf, ok := mfs[f.name]
		if !ok {
			bad("%s: family missing", f.name)
			continue
		}
		if mf.GetType() != f.typ {
			bad("%s: type %s, want %s", f.name, mf.GetType(), f.typ)
		}
		wantLabels := slices.Sorted(slices.Values(f.labels))
		got := map[string]*dto.Metric{}
		for _, m := range mf.GetMetric() {
			var names []string
			for _, lp := range m.GetLabel() {
				names = append(names, lp.GetName())
			}
			sort.Strings(names)
			if !slices.Equal(names, wantLabels) {
				bad("%s%s: labels %v, want exactly %v", f.name, labelString(m), names, wantLabels)
			}
			got[labelString(m)] = m
		}
		if len(mf.GetMetric()) == 0 {
			bad("%s: family has no samples", f.name)
		}

		// Exactly the expected series, with their values.
		wantKeys := map[string]bool{}
		for _, s := range want[f.name] {
			key := labelMapString(s.labels)
			wantKeys[key] = true
			m, ok := got[key]
			if !ok {
				bad("%s%s: series missing", f.name, key)
				continue
			}
			v := sampleValue(m, f.typ)
			switch {
			case s.within != nil && (v < s.within[0] || v > s.within[1]):
				bad("%s%s = %v, want within [%v, %v]", f.name, key, v, s.within[0], s.within[1])
			case s.within == nil && v != s.value:
				bad("%s%s = %v, want %v", f.name, key, v, s.value)
			}
		}
		for key := range got {
			if !wantKeys[key] {
				bad("%s%s: unexpected series", f.name, key)
			}
		}
	}
	for name := range mfs {
		if strings.HasPrefix(name, "ernic_") && !known[name] {
			bad("%s: family not in the metric contract (add a row to shared/spec/metrics.md or beyondContract)", name)
		}
	}
	sort.Strings(problems)
	return problems
}

func sampleValue(m *dto.Metric, typ dto.MetricType) float64 {
	if typ == counter {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

func labelString(m *dto.Metric) string {
	l := map[string]string{}
	for _, lp := range m.GetLabel() {
		l[lp.GetName()] = lp.GetValue()
	}
	return labelMapString(l)
}

func labelMapString(l map[string]string) string {
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range l {
			if !yield(k) {
				return
			}
		}
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", k, l[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func formatFamilies(mfs map[string]*dto.MetricFamily) string {
	var b bytes.Buffer
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range mfs {
			if !yield(k) {
				return
			}
		}
	})
	for _, n := range names {
		if _, err := expfmt.MetricFamilyToText(&b, mfs[n]); err != nil {
			fmt.Fprintf(&b, "# %s: %v\n", n, err)
		}
	}
	return b.String()
}

// ownStart is this process's start time as the receiver computes it.
func ownStart() time.Time { return processStart(os.Getpid()) }

// processStart is the start time of process pid as the receiver computes
// it: field 22 of /proc/<pid>/stat (clock ticks since boot, USER_HZ 100)
// plus btime.
func processStart(pid int) time.Time {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		panic(err)
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	// fields[0] is field 3 (state): field 22 is fields[19].
	ticks, err := strconv.ParseInt(fields[19], 10, 64)
	if err != nil {
		panic(err)
	}
	f, err := os.Open("/proc/stat")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
			btime, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				panic(err)
			}
			return time.Unix(btime, 0).Add(time.Duration(ticks) * (time.Second / 100))
		}
	}
	panic(errors.New("/proc/stat has no btime line"))
}

// waitPastOwnStart waits until the clock is clearly past this process's start
// time as computed from /proc: the receiver ignores a stats file older than
// its server process (a leftover of the previous one), and the fixtures'
// server process is this one.
func waitPastOwnStart(t *testing.T) {
	t.Helper()
	if d := time.Until(ownStart().Add(2 * time.Second)); d > 0 {
		t.Logf("waiting %v so that the fixture files are younger than the test process", d.Round(time.Millisecond))
		time.Sleep(d)
	}
}

// tcpListeners returns the sorted local addresses of the TCP sockets in
// LISTEN state that process pid holds, from /proc.
func tcpListeners(pid int) ([]string, error) {
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
		if err != nil {
			continue
		}
		if inode, ok := strings.CutPrefix(target, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	var out []string
	for _, table := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, err
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" || !inodes[f[9]] {
				continue
			}
			addr, err := decodeProcAddr(f[1])
			if err != nil {
				return nil, err
			}
			out = append(out, addr)
		}
	}
	sort.Strings(out)
	return out, nil
}

// decodeProcAddr decodes a /proc/net/tcp{,6} local address "HEXIP:HEXPORT".
func decodeProcAddr(s string) (string, error) {
	hexIP, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return "", fmt.Errorf("bad address %q", s)
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return "", err
	}
	raw := make([]byte, len(hexIP)/2)
	for i := range raw {
		b, err := strconv.ParseUint(hexIP[2*i:2*i+2], 16, 8)
		if err != nil {
			return "", err
		}
		raw[i] = byte(b)
	}
	// The kernel prints the address as 32-bit words in host (little-endian)
	// byte order.
	for i := 0; i+4 <= len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	return net.JoinHostPort(net.IP(raw).String(), strconv.FormatUint(port, 10)), nil
}

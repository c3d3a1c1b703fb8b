// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package pkgtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// versionRepo is a new git repository holding scripts/version.sh and a
// builder-config.yaml with base version 0.3.0, for the script's cases.
func versionRepo(t *testing.T) (dir string, git func(args ...string), version func(args ...string) string) {
	t.Helper()
	harness.Tool(t, "git", "apt-get install git")
	dir = t.TempDir()
	script, err := os.ReadFile(filepath.Join(harness.RepoRoot(t), "scripts/version.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scripts/version.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "builder-config.yaml"), []byte("dist:\n  name: x\n  version: 0.3.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org", "GIT_CONFIG_GLOBAL=/dev/null")
	git = func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	version = func(args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(dir, "scripts/version.sh"), args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("version.sh %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	return dir, git, version
}

// TestVersionScript: scripts/version.sh without git, without tags, with a
// dirty tree, on a tag and after it; and the Debian forms sort in that order.
func TestVersionScript(t *testing.T) {
	dir, git, version := versionRepo(t)
	var seen []string
	check := func(got, wantPrefix, wantSuffix string) {
		t.Helper()
		if !strings.HasPrefix(got, wantPrefix) || !strings.HasSuffix(got, wantSuffix) {
			t.Errorf("version.sh: %q, want %s...%s", got, wantPrefix, wantSuffix)
		}
	}
	check(version(), "0.3.0-dev.0+unknown", "0.3.0-dev.0+unknown")

	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "one")
	git("commit", "-q", "--allow-empty", "-m", "two")
	v := version()
	check(v, "0.3.0-dev.2+g", "")
	if len(strings.TrimPrefix(v, "0.3.0-dev.2+g")) != 7 {
		t.Errorf("version.sh: %q, want a 7-digit hash", v)
	}
	check(version("--deb"), "0.3.0~dev.2+g", "")
	seen = append(seen, version("--deb"))

	if err := os.WriteFile(filepath.Join(dir, "builder-config.yaml"), []byte("dist:\n  name: x\n  version: 0.3.0\n# edit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check(version(), v, ".dirty")
	git("commit", "-q", "-a", "-m", "three")
	seen = append(seen, version("--deb"))

	git("tag", "v0.3.0")
	check(version(), "0.3.0", "0.3.0")
	seen = append(seen, version("--deb"))
	git("commit", "-q", "--allow-empty", "-m", "four")
	check(version(), "0.3.1-dev.1+g", "")
	seen = append(seen, version("--deb"))

	for i := 1; i < len(seen); i++ {
		if out, err := exec.Command("dpkg", "--compare-versions", seen[i-1], "lt", seen[i]).CombinedOutput(); err != nil {
			t.Errorf("dpkg: %s does not sort before %s (%v %s)", seen[i-1], seen[i], err, out)
		}
	}
}

// TestCollectorVersion: the collector `make otelcol` built reports the
// version of scripts/version.sh, both in --version and as service.version of
// its own telemetry.
func TestCollectorVersion(t *testing.T) {
	bin := harness.CollectorBinary(t)
	out, err := exec.Command(filepath.Join(harness.RepoRoot(t), "scripts/version.sh")).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(out))
	got, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", bin, err, got)
	}
	if strings.TrimSpace(string(got)) != "otelcol-ernic version "+want {
		t.Errorf("otelcol-ernic --version: %q, want %q", strings.TrimSpace(string(got)), "otelcol-ernic version "+want)
	}

	// The collector's own metrics, pulled on a free port: their target_info
	// carries the resource, service.version among it.
	port := harness.FreePort(t)
	telemetry := harness.WriteFile(t, "telemetry.yaml", fmt.Sprintf(`service:
  telemetry:
    metrics:
      level: basic
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: %d
`, port))
	p := harness.StartCollector(t, harness.ConfigArgs("config/local.yaml", telemetry), []string{
		"ERNIC_RUN_DIR=" + t.TempDir(),
		fmt.Sprintf("ERNIC_EXPORTER_PORT=%d", harness.FreePort(t)),
		fmt.Sprintf("ERNIC_HEALTH_PORT=%d", harness.FreePort(t)),
	}, nil, true)
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		families, err := harness.Scrape(ctx, url)
		cancel()
		if f := families["target_info"]; err == nil && f != nil && len(f.GetMetric()) == 1 {
			labels := map[string]string{}
			for _, l := range f.GetMetric()[0].GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["service_version"] != want || labels["service_name"] != "otelcol-ernic" {
				t.Errorf("target_info of the collector's telemetry: %v, want service_name otelcol-ernic, service_version %s", labels, want)
			}
			return
		}
		if !p.Running() || time.Now().After(deadline) {
			t.Fatalf("no target_info at %s (%v); log:\n%s", url, err, p.Log.String())
		}
		time.Sleep(300 * time.Millisecond)
	}
}

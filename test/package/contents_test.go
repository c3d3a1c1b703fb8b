// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package pkgtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rocm-ernic/otelcol-ernic/test/internal/harness"
)

// debDescribe is what the golden file of a .deb holds: its data files
// (mode, owner, path and link target, without sizes and times), its control
// fields (version, architecture and installed size masked), its control
// members and its conffiles.
func debDescribe(t *testing.T, deb, arch, debVersion string) string {
	t.Helper()
	dpkgDeb := harness.Tool(t, "dpkg-deb", "apt-get install dpkg")
	var b strings.Builder
	b.WriteString("# dpkg-deb -c\n")
	for _, l := range strings.Split(strings.TrimSpace(output(t, dpkgDeb, "-c", deb)), "\n") {
		// mode owner/group size date time path [-> target]
		f := strings.Fields(l)
		b.WriteString(f[0] + " " + f[1] + " " + strings.Join(f[5:], " ") + "\n")
	}
	b.WriteString("# dpkg-deb -f\n")
	fields := output(t, dpkgDeb, "-f", deb)
	for _, mask := range []struct{ key, value string }{
		{"Version", debVersion}, {"Architecture", arch}, {"Installed-Size", ""},
	} {
		re := regexp.MustCompile(`(?m)^` + mask.key + `: (.*)$`)
		m := re.FindStringSubmatch(fields)
		if m == nil {
			t.Errorf("%s: no %s field", deb, mask.key)
			continue
		}
		if mask.value != "" && m[1] != mask.value {
			t.Errorf("%s: %s %q, want %q", deb, mask.key, m[1], mask.value)
		}
		fields = re.ReplaceAllString(fields, mask.key+": <"+strings.ToLower(mask.key)+">")
	}
	b.WriteString(fields)
	b.WriteString("# dpkg-deb --ctrl-tarfile | tar -tv\n")
	ctrl := t.TempDir()
	extract := exec.Command(dpkgDeb, "--control", deb, ctrl)
	if out, err := extract.CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb --control %s: %v\n%s", deb, err, out)
	}
	tarList := exec.Command("sh", "-c", `dpkg-deb --ctrl-tarfile "$1" | tar -tvf -`, "sh", deb)
	out, err := tarList.Output()
	if err != nil {
		t.Fatalf("dpkg-deb --ctrl-tarfile %s | tar -tv: %v", deb, err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		b.WriteString(f[0] + " " + f[1] + " " + f[len(f)-1] + "\n")
	}
	conffiles, err := os.ReadFile(filepath.Join(ctrl, "conffiles"))
	if err != nil {
		t.Errorf("%s has no conffiles: %v", deb, err)
	}
	b.WriteString("# conffiles\n")
	b.Write(conffiles)
	// The maintainer scripts are packaging/deb/'s, unchanged.
	for _, script := range []string{"postinst", "prerm", "postrm"} {
		got, err := os.ReadFile(filepath.Join(ctrl, script))
		if err != nil {
			t.Errorf("%s has no %s: %v", deb, script, err)
			continue
		}
		want, err := os.ReadFile(filepath.Join(harness.RepoRoot(t), "packaging/deb", script))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: %s is not packaging/deb/%s:\n%s", deb, script, script, got)
		}
	}
	return b.String()
}

// TestDebContents: each architecture's .deb holds the files, control fields,
// conffiles and maintainer scripts of testdata/deb.golden, and the version of
// scripts/version.sh.
func TestDebContents(t *testing.T) {
	_, debVersion := packages(t)
	for _, arch := range archs {
		t.Run(arch, func(t *testing.T) {
			deb := debPath(t, arch)
			got := debDescribe(t, deb, arch, debVersion)
			golden(t, "deb.golden", got)
			// The packaged unit is deploy/'s with the packaged binary's path.
			dir := t.TempDir()
			if out, err := exec.Command("dpkg-deb", "-x", deb, dir).CombinedOutput(); err != nil {
				t.Fatalf("dpkg-deb -x: %v\n%s", err, out)
			}
			unit, err := os.ReadFile(filepath.Join(dir, "usr/lib/systemd/system/otelcol-ernic.service"))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{
				"\nExecStart=/usr/bin/otelcol-ernic --config /etc/otelcol-ernic/config.yaml\n",
				"\nEnvironmentFile=-/etc/rocm-ernic/rocm-ernic.env\n",
			} {
				if !strings.Contains(string(unit), want) {
					t.Errorf("packaged unit has no %q", strings.TrimSpace(want))
				}
			}
			if strings.Contains(string(unit), "/usr/local/") {
				t.Error("packaged unit still names /usr/local/")
			}
			// The binary is built for arch.
			file := output(t, "file", "-b", filepath.Join(dir, "usr/bin/otelcol-ernic"))
			wantMachine := map[string]string{"amd64": "x86-64", "arm64": "ARM aarch64"}[arch]
			if !strings.Contains(file, wantMachine) || !strings.Contains(file, "statically linked") {
				t.Errorf("usr/bin/otelcol-ernic of the %s package: %s", arch, file)
			}
		})
	}
}

// TestRPMContents: each architecture's .rpm holds the files (with their
// config flags) and scriptlets of testdata/rpm.golden, and its version.
func TestRPMContents(t *testing.T) {
	_, debVersion := packages(t)
	rpm := harness.Tool(t, "rpm", "apt-get install rpm")
	for _, arch := range archs {
		t.Run(arch, func(t *testing.T) {
			pkg := rpmPath(t, arch)
			head := output(t, rpm, "-qp", "--qf", "%{NAME} %{VERSION}-%{RELEASE} %{ARCH}\n", pkg)
			if want := "otelcol-ernic " + debVersion + " " + rpmArch[arch] + "\n"; head != want {
				t.Errorf("rpm -qp %s: %q, want %q", pkg, head, want)
			}
			files := output(t, rpm, "-qp", "--qf",
				"[%{FILEMODES:perms} %{FILEUSERNAME}/%{FILEGROUPNAME} %{FILEFLAGS:fflags} %{FILENAMES}\n]", pkg)
			scripts := output(t, rpm, "-qp", "--scripts", pkg)
			golden(t, "rpm.golden", "# files\n"+files+"# scripts\n"+scripts)
		})
	}
}

// TestLintian: lintian reports no error and no warning on either .deb, and
// each override in packaging/lintian-overrides (installed with the package)
// is one lintian used.
func TestLintian(t *testing.T) {
	packages(t)
	lintian := harness.Tool(t, "lintian", "apt-get install lintian")
	overrides, err := os.ReadFile(filepath.Join(harness.RepoRoot(t), "packaging/lintian-overrides"))
	if err != nil {
		t.Fatal(err)
	}
	for _, arch := range archs {
		t.Run(arch, func(t *testing.T) {
			deb := debPath(t, arch)
			cmd := exec.Command(lintian, "--fail-on", "error,warning", "--info", deb)
			cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
			out, err := cmd.CombinedOutput()
			t.Logf("lintian --fail-on error,warning --info %s:\n%s", filepath.Base(deb), out)
			if err != nil {
				t.Errorf("lintian: %v", err)
			}
			// Again, with the overridden tags shown (--show-overrides makes
			// them count for --fail-on, hence a second run without it).
			cmd = exec.Command(lintian, "--show-overrides", "--fail-on", "none", deb)
			cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
			out, err = cmd.CombinedOutput()
			t.Logf("lintian --show-overrides --fail-on none %s:\n%s", filepath.Base(deb), out)
			if err != nil {
				t.Errorf("lintian --show-overrides: %v", err)
			}
			for _, l := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(l, "E: ") || strings.HasPrefix(l, "W: ") {
					t.Errorf("lintian: %s", l)
				}
			}
			for _, l := range strings.Split(string(overrides), "\n") {
				f := strings.Fields(l)
				if len(f) < 2 || strings.HasPrefix(l, "#") {
					continue
				}
				if !strings.Contains(string(out), "O: "+f[0]+" "+f[1]) {
					t.Errorf("override %q was not used by lintian (remove it)", l)
				}
			}
		})
	}
}

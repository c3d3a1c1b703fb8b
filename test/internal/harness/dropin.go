// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The headings of the blocks of deploy/otelcol-ernic.service.d/credentials.conf.
const (
	PushCredentials = "# --- Push"
	PullCredentials = "# --- Pull"
)

// CredentialsDropIn is deploy/otelcol-ernic.service.d/credentials.conf with
// the settings of the block whose heading starts with heading uncommented,
// as an administrator turns it on, and /usr/bin/otelcol-ernic replaced by
// bin. It fails the test when the file sets anything outside its commented
// blocks, or the block has fewer than 5 settings.
func CredentialsDropIn(t testing.TB, heading, bin string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(RepoRoot(t), "deploy", "otelcol-ernic.service.d", "credentials.conf"))
	if err != nil {
		t.Fatal(err)
	}
	setting := regexp.MustCompile(`^#([A-Z][A-Za-z]*=.*)$`)
	var out []string
	in, n := false, 0
	for _, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(line, "# --- ") {
			in = strings.HasPrefix(line, heading)
		}
		if m := setting.FindStringSubmatch(line); m != nil {
			if in {
				line, n = m[1], n+1
			}
		} else if !strings.HasPrefix(line, "#") && strings.Contains(line, "=") {
			t.Errorf("credentials.conf sets %q outside the commented blocks", line)
		}
		out = append(out, strings.ReplaceAll(line, "/usr/bin/otelcol-ernic", bin))
	}
	if n < 5 {
		t.Fatalf("credentials.conf: %d settings in the block %q", n, heading)
	}
	return []byte(strings.Join(out, "\n"))
}

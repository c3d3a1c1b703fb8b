// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The comments of the shipped configurations and of the systemd unit point
// to the docs for their figures ("docs/operations.md, Sizing", "deploy/README.md,
// Credentials"): every page
// they name exists, and so does every section, as the start of a heading.
func TestConfigCommentsPointToDocSections(t *testing.T) {
	files, err := filepath.Glob("../../config/*.yaml")
	require.NoError(t, err)
	files = append(files, "../../deploy/otelcol-ernic.service")
	ref := regexp.MustCompile(`((?:docs/[a-z-]+|deploy/README)\.md)(?:,\s+([A-Z][^).;:]*))?`)
	n := 0
	for _, file := range files {
		for _, m := range ref.FindAllStringSubmatch(commentText(t, file), -1) {
			n++
			headings := docHeadings(t, "../../"+m[1])
			if m[2] == "" {
				continue
			}
			found := false
			for _, h := range headings {
				found = found || strings.HasPrefix(h, strings.TrimSpace(m[2]))
			}
			assert.True(t, found, "%s: %s has no section %q", file, m[1], m[2])
		}
	}
	require.Greater(t, n, 10, "references found")
}

// commentText is the comments of a configuration or unit file joined into
// one line each paragraph, so that a reference wrapped over two lines reads
// as one.
func commentText(t *testing.T, file string) string {
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if _, c, ok := strings.Cut(line, "#"); ok {
			out = append(out, strings.TrimSpace(c))
		} else {
			out = append(out, "\n")
		}
	}
	return strings.Join(out, " ")
}

// docHeadings is the text of the markdown headings of file, without the
// leading #s and backquotes.
func docHeadings(t *testing.T, file string) []string {
	b, err := os.ReadFile(file)
	require.NoError(t, err, "a comment names %s", file)
	var hs []string
	for _, m := range regexp.MustCompile(`(?m)^#+ (.+)$`).FindAllStringSubmatch(string(b), -1) {
		hs = append(hs, strings.ReplaceAll(m[1], "`", ""))
	}
	return hs
}

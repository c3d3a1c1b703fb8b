// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package rundir

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testReader(sleeps *[]time.Duration) *Reader {
	r := NewReader(1 << 20)
	r.sleep = func(d time.Duration) { *sleeps = append(*sleeps, d) }
	return r
}

// openDir opens the directory of path as an os.Root and returns it with the
// file's name in it.
func openDir(t *testing.T, path string) (*os.Root, string) {
	t.Helper()
	root, err := os.OpenRoot(filepath.Dir(path))
	require.NoError(t, err)
	t.Cleanup(func() { root.Close() })
	return root, filepath.Base(path)
}

func readStatsAt(t *testing.T, r *Reader, path string, check func(*Stats) error) (*Stats, time.Time, error) {
	t.Helper()
	root, name := openDir(t, path)
	s, fi, err := r.ReadStats(context.Background(), root, name, nil, check)
	if err != nil {
		return nil, time.Time{}, err
	}
	return s, fi.ModTime(), nil
}

func writeFile(t *testing.T, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "2.stats")
	require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
	return path
}

func TestReadStatsWholeFile(t *testing.T) {
	var sleeps []time.Duration
	path := writeFile(t, string(readTestdata(t, "rundir/basic/2.stats")))
	s, mtime, err := readStatsAt(t, testReader(&sleeps), path, nil)
	require.NoError(t, err)
	assert.Len(t, s.QPs, 2)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, fi.ModTime(), mtime)
	assert.Empty(t, sleeps, "a whole file is read once")
}

func TestReadStatsMissing(t *testing.T) {
	var sleeps []time.Duration
	_, _, err := readStatsAt(t, testReader(&sleeps), filepath.Join(t.TempDir(), "1.stats"), nil)
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.Empty(t, sleeps, "a missing file is not retried")
}

func TestReadStatsTornRetriesThenFails(t *testing.T) {
	var sleeps []time.Duration
	whole := string(readTestdata(t, "rundir/basic/2.stats"))
	path := writeFile(t, whole[:1000])
	_, _, err := readStatsAt(t, testReader(&sleeps), path, nil)
	require.ErrorIs(t, err, ErrIncomplete)
	assert.Equal(t, DefaultBackoff, sleeps)
	assert.Contains(t, err.Error(), path)
}

func TestReadStatsTornThenWhole(t *testing.T) {
	whole := string(readTestdata(t, "rundir/basic/2.stats"))
	path := writeFile(t, "")
	r := NewReader(1 << 20)
	r.sleep = func(time.Duration) { require.NoError(t, os.WriteFile(path, []byte(whole), 0o644)) }
	s, _, err := readStatsAt(t, r, path, nil)
	require.NoError(t, err)
	assert.Equal(t, uint64(3071), s.WriteCount)
}

func TestReadStatsCheckRejects(t *testing.T) {
	var sleeps []time.Duration
	path := writeFile(t, string(readTestdata(t, "rundir/basic/2.stats")))
	calls := 0
	_, _, err := readStatsAt(t, testReader(&sleeps), path, func(*Stats) error { calls++; return ErrShrunk })
	require.ErrorIs(t, err, ErrShrunk)
	assert.Equal(t, 1+len(DefaultBackoff), calls)
}

// A whole-looking file whose size is a multiple of the stdio buffer is
// confirmed by a second read before it is accepted.
func TestReadStatsBufferMultipleConfirmed(t *testing.T) {
	var sleeps []time.Duration
	whole := string(readTestdata(t, "rundir/basic/2.stats"))
	pad := StdioBuffer - len(whole)
	require.Positive(t, pad)
	padded := strings.Replace(whole, "  socket      : /run/rocm-ernic/2.sock\n",
		"  socket      : /run/rocm-ernic/2.sock"+strings.Repeat(" ", pad)+"\n", 1)
	require.Len(t, padded, StdioBuffer)
	path := writeFile(t, padded)
	s, _, err := readStatsAt(t, testReader(&sleeps), path, nil)
	require.NoError(t, err)
	assert.Len(t, s.QPs, 2)
	assert.Len(t, sleeps, 1, "one confirming read")
}

func TestReadFileLimits(t *testing.T) {
	var sleeps []time.Duration
	r := testReader(&sleeps)
	r.MaxBytes = 100
	path := writeFile(t, strings.Repeat("x", 101))
	root, name := openDir(t, path)
	_, _, err := r.ReadFile(root, name)
	require.ErrorContains(t, err, "101 bytes, over the limit of 100")

	root, name = openDir(t, t.TempDir())
	_, _, err = r.ReadFile(root, name)
	require.ErrorContains(t, err, "not a regular file")
}

func TestReadManifestTorn(t *testing.T) {
	var sleeps []time.Duration
	path := filepath.Join(t.TempDir(), ManifestFile)
	require.NoError(t, os.WriteFile(path, []byte(`{"instances": [{"id": 1,`), 0o644))
	root, _ := openDir(t, path)
	_, err := testReader(&sleeps).ReadManifest(context.Background(), root)
	require.True(t, errors.Is(err, ErrIncomplete), "got %v", err)
	assert.Len(t, sleeps, len(DefaultBackoff))
}

// A FIFO or a device in place of a stats file is refused at once; opening a
// FIFO must not block the scrape until some writer appears.
func TestReadFileRefusesSpecialFiles(t *testing.T) {
	var sleeps []time.Duration
	r := testReader(&sleeps)
	fifo := filepath.Join(t.TempDir(), "3.stats")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	_, _, err := readStatsAt(t, r, fifo, nil)
	require.ErrorContains(t, err, "not a regular file")

	dir := t.TempDir()
	require.NoError(t, os.Symlink("../../dev/zero", filepath.Join(dir, "4.stats")))
	_, _, err = readStatsAt(t, r, filepath.Join(dir, "4.stats"), nil)
	require.ErrorContains(t, err, "4.stats")
	assert.Empty(t, sleeps, "not retried")
}

// Files are read through the run directory as an os.Root: a symbolic link
// inside it is followed, one that leads out of it is refused.
func TestReadFileConfinedToDir(t *testing.T) {
	var sleeps []time.Duration
	r := testReader(&sleeps)
	outside := t.TempDir()
	run := filepath.Join(t.TempDir(), "run")
	require.NoError(t, os.Mkdir(run, 0o755))
	whole := readTestdata(t, "rundir/basic/2.stats")
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.stats"), whole, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(run, "real.stats"), whole, 0o644))

	require.NoError(t, os.Symlink("real.stats", filepath.Join(run, "2.stats")))
	s, _, err := readStatsAt(t, r, filepath.Join(run, "2.stats"), nil)
	require.NoError(t, err, "a link inside the run directory is followed")
	assert.Len(t, s.QPs, 2)

	rel, err := filepath.Rel(run, filepath.Join(outside, "secret.stats"))
	require.NoError(t, err)
	for name, target := range map[string]string{
		"3.stats": rel,                                    // relative, leading out
		"4.stats": filepath.Join(outside, "secret.stats"), // absolute
		"5.stats": filepath.Join(run, "real.stats"),       // absolute, even inside
	} {
		require.NoError(t, os.Symlink(target, filepath.Join(run, name)))
		_, _, err := readStatsAt(t, r, filepath.Join(run, name), nil)
		require.Error(t, err, "%s -> %s", name, target)
		assert.Contains(t, err.Error(), filepath.Join(run, name))
	}
	assert.Empty(t, sleeps, "refusals are not retried")
}

// A file that grows past MaxBytes after it was opened (one big write(2)
// whose mtime is set before the copy, so the size and mtime at the end of
// the read agree with the data) is refused, and no more than MaxBytes+1
// bytes of it are read.
func TestReadFileGrowsPastLimitDuringRead(t *testing.T) {
	var sleeps []time.Duration
	r := testReader(&sleeps)
	r.MaxBytes = 10000
	path := writeFile(t, strings.Repeat("x", 100))
	root, name := openDir(t, path)
	big := strings.Repeat("y", 50000)
	r.opened = func() { require.NoError(t, os.WriteFile(path, []byte(big), 0o644)) }
	_, _, err := r.ReadFile(root, name)
	require.ErrorContains(t, err, "over the limit of 10000 bytes (it grew during the read)")
	assert.LessOrEqual(t, cap(r.buf), 10001, "the reader kept no more than MaxBytes+1 bytes")

	// A file of exactly MaxBytes is whole.
	exact := strings.Repeat("z", 10000)
	require.NoError(t, os.WriteFile(path, []byte(exact), 0o644))
	r.opened = nil
	data, fi, err := r.ReadFile(root, name)
	require.NoError(t, err)
	assert.Equal(t, exact, string(data))
	assert.Equal(t, int64(10000), fi.Size())
	assert.Empty(t, sleeps)
}

// ReadManifest parses the same bytes once; each call returns a copy that
// the caller may change (the scraper cuts long labels in place), and new
// bytes are parsed anew.
func TestReadManifestSameBytes(t *testing.T) {
	var sleeps []time.Duration
	r := testReader(&sleeps)
	path := filepath.Join(t.TempDir(), ManifestFile)
	doc := `{"instances": [{"id": 1, "role": "manager", "pid": 10, "mac": "02:aa:00:00:00:01", "vm": null},
	 {"id": 2, "role": "worker", "pid": 11, "vm": {"attached": true, "vm_name": "train-a", "gpu": ""}}]}`
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
	root, _ := openDir(t, path)
	want, err := ParseManifest([]byte(doc))
	require.NoError(t, err)

	m1, err := r.ReadManifest(context.Background(), root)
	require.NoError(t, err)
	assert.Equal(t, want, m1)
	m1.Instances[0].Role = "changed"
	m1.Instances[1].VM.Name = "changed"
	m2, err := r.ReadManifest(context.Background(), root)
	require.NoError(t, err)
	assert.Equal(t, want, m2, "the caller's changes do not reach the next read")
	assert.NotSame(t, m1.Instances[1].VM, m2.Instances[1].VM)

	doc2 := strings.Replace(doc, `"pid": 11`, `"pid": 12`, 1)
	require.NoError(t, os.WriteFile(path, []byte(doc2), 0o644))
	m3, err := r.ReadManifest(context.Background(), root)
	require.NoError(t, err)
	assert.Equal(t, 12, m3.Instances[1].PID)
}

// The largest max_file_bytes, a way to say "no limit", reads files.
func TestReadFileNoLimit(t *testing.T) {
	r := NewReader(math.MaxInt64)
	path := writeFile(t, "whole\n")
	root, name := openDir(t, path)
	data, _, err := r.ReadFile(root, name)
	require.NoError(t, err)
	assert.Equal(t, "whole\n", string(data))
}

// A huge manifest replaced by a small one does not keep its memory: the
// read buffer and the copy of the last manifest's bytes shrink.
func TestReaderMemoryAfterHugeManifest(t *testing.T) {
	r := NewReader(64 << 20)
	path := filepath.Join(t.TempDir(), ManifestFile)
	var b strings.Builder
	b.WriteString(`{"instances": [`)
	for i := 1; i <= 100_000; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id": ` + strconv.Itoa(i) + `, "role": "worker", "pid": 10}`)
	}
	b.WriteString(`]}`)
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	root, _ := openDir(t, path)
	m, err := r.ReadManifest(context.Background(), root)
	require.NoError(t, err)
	require.Len(t, m.Instances, 100_000)
	r.Trim()
	require.Greater(t, cap(r.buf), 1<<20, "the buffer is kept while its files are large")

	require.NoError(t, os.WriteFile(path, []byte(`{"instances": [{"id": 1, "pid": 10}]}`), 0o644))
	m, err = r.ReadManifest(context.Background(), root)
	require.NoError(t, err)
	require.Len(t, m.Instances, 1)
	r.Trim()
	assert.Less(t, cap(r.buf), 1<<20)
	assert.Less(t, cap(r.manifestData), 1<<20)
}

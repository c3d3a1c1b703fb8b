// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package queuestorageextension

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/rocm-ernic/otelcol-ernic/extension/queuestorageextension/internal/metadata"
)

var (
	remoteWrite = component.MustNewID("remote_write")
	otlpDurable = component.MustNewID("otlp_durable")
)

// queueFile is the file file_storage gives an exporter's metrics queue.
func queueFile(dir string, id component.ID) string {
	return filepath.Join(dir, "exporter_"+id.Type().String()+"_"+id.Name()+"_metrics")
}

// start creates and starts the extension on dir with the shipped
// configurations' settings, logging into the returned observer.
func start(t *testing.T, dir string, bound SetAsideConfig) (*queueStorage, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.InfoLevel)
	cfg := createDefaultConfig().(*Config)
	cfg.Directory = dir
	cfg.CreateDirectory = true
	cfg.FSync = true
	cfg.Recreate = true
	cfg.Compaction.Directory = dir
	cfg.Compaction.OnStart = true
	cfg.SetAside = bound
	require.NoError(t, cfg.Validate())
	set := extensiontest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	ext, err := createExtension(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), componenttest.NewNopHost()))
	return ext.(*queueStorage), logs
}

func client(t *testing.T, q *queueStorage, id component.ID) storage.Client {
	t.Helper()
	c, err := q.GetClient(context.Background(), component.KindExporter, id, "metrics")
	require.NoError(t, err)
	return c
}

func garbage(t *testing.T, path string, n int) {
	t.Helper()
	b := make([]byte, n)
	_, _ = rand.Read(b)
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

func damaged(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+damagedSuffix))
	require.NoError(t, err)
	return m
}

func TestGarbageQueueFileSetAsideAndStartedAnew(t *testing.T) {
	dir := t.TempDir()
	// A good queue of another exporter, with a batch in it.
	q, _ := start(t, dir, SetAsideConfig{MaxFiles: 3})
	good := client(t, q, otlpDurable)
	require.NoError(t, good.Set(context.Background(), "1", []byte("batch")))
	require.NoError(t, good.Close(context.Background()))
	require.NoError(t, q.Shutdown(context.Background()))

	garbage(t, queueFile(dir, remoteWrite), 100_000)
	q, logs := start(t, dir, SetAsideConfig{MaxFiles: 3})
	defer func() { require.NoError(t, q.Shutdown(context.Background())) }()

	aside := damaged(t, dir)
	require.Len(t, aside, 1)
	assert.True(t, strings.HasPrefix(filepath.Base(aside[0]), "exporter_remote_write__metrics.20"), aside[0])
	info, err := os.Stat(aside[0])
	require.NoError(t, err)
	assert.Equal(t, int64(100_000), info.Size())

	errs := logs.FilterLevelExact(zapcore.ErrorLevel).All()
	require.Len(t, errs, 1)
	fields := errs[0].ContextMap()
	assert.Equal(t, queueFile(dir, remoteWrite), fields["file"])
	assert.Equal(t, int64(100_000), fields["bytes"])
	assert.Equal(t, aside[0], fields["set_aside_as"])
	assert.Contains(t, fields["cause"], "invalid database")

	// The damaged exporter gets a fresh queue that works.
	fresh := client(t, q, remoteWrite)
	require.NoError(t, fresh.Set(context.Background(), "k", []byte("v")))
	v, err := fresh.Get(context.Background(), "k")
	require.NoError(t, err)
	assert.Equal(t, []byte("v"), v)
	require.NoError(t, fresh.Close(context.Background()))

	// The good queue was left as it was.
	good = client(t, q, otlpDurable)
	v, err = good.Get(context.Background(), "1")
	require.NoError(t, err)
	assert.Equal(t, []byte("batch"), v)
	require.NoError(t, good.Close(context.Background()))
}

func TestTruncatedQueueFileSetAside(t *testing.T) {
	dir := t.TempDir()
	q, _ := start(t, dir, SetAsideConfig{MaxFiles: 3})
	c := client(t, q, remoteWrite)
	for i := range 200 {
		require.NoError(t, c.Set(context.Background(), string(rune('a'+i%26))+strings.Repeat("x", i), make([]byte, 4096)))
	}
	require.NoError(t, c.Close(context.Background()))
	require.NoError(t, q.Shutdown(context.Background()))
	path := queueFile(dir, remoteWrite)
	info, err := os.Stat(path)
	require.NoError(t, err)
	// What a crash on a file system without data journaling leaves: the
	// head of the file, pages past it lost.
	require.NoError(t, os.Truncate(path, info.Size()/3))

	require.Error(t, readable(path))
	q, _ = start(t, dir, SetAsideConfig{MaxFiles: 3})
	defer func() { require.NoError(t, q.Shutdown(context.Background())) }()
	assert.Len(t, damaged(t, dir), 1)
	fresh := client(t, q, remoteWrite)
	require.NoError(t, fresh.Set(context.Background(), "k", []byte("v")))
	require.NoError(t, fresh.Close(context.Background()))
}

func TestTwentyDamagedFilesStayWithinBound(t *testing.T) {
	dir := t.TempDir()
	bound := SetAsideConfig{MaxFiles: 3, MaxBytes: 250_000}
	// file_storage's recreate leaves *.backup files: they count too.
	garbage(t, filepath.Join(dir, "exporter_otlp_durable__metrics.20250101T000000.000Z.backup"), 50_000)
	for i := range 20 {
		garbage(t, queueFile(dir, remoteWrite), 100_000)
		q, _ := start(t, dir, bound)
		c := client(t, q, remoteWrite)
		require.NoError(t, c.Close(context.Background()))
		require.NoError(t, q.Shutdown(context.Background()))

		var files int
		var bytes int64
		for _, f := range (setAsideDir{path: dir}).setAside() {
			files++
			bytes += f.bytes
		}
		require.LessOrEqual(t, files, bound.MaxFiles, "round %d", i)
		require.LessOrEqual(t, bytes, bound.MaxBytes, "round %d", i)
		// The newest damaged file is always kept.
		require.NotEmpty(t, damaged(t, dir), "round %d", i)
		time.Sleep(5 * time.Millisecond)
	}
	// 250,000 bytes hold two of the 100,000-byte files; the older backup went first.
	assert.Len(t, damaged(t, dir), 2)
	backups, _ := filepath.Glob(filepath.Join(dir, "*"+backupSuffix))
	assert.Empty(t, backups)
}

func TestNoFileKeptWithMaxFilesZero(t *testing.T) {
	dir := t.TempDir()
	garbage(t, queueFile(dir, remoteWrite), 10_000)
	q, logs := start(t, dir, SetAsideConfig{})
	defer func() { require.NoError(t, q.Shutdown(context.Background())) }()
	assert.Empty(t, damaged(t, dir))
	assert.Len(t, logs.FilterMessageSnippet("deleted a damaged queue file").All(), 1)
}

func TestFileInUseOrEmptyIsNotDamaged(t *testing.T) {
	dir := t.TempDir()
	// Another process (here, another open) holds the file locked.
	held := queueFile(dir, remoteWrite)
	db, err := bbolt.Open(held, 0o600, nil)
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, os.WriteFile(queueFile(dir, otlpDurable), nil, 0o600))

	d := setAsideDir{path: dir, bound: SetAsideConfig{MaxFiles: 3}, logger: zap.NewNop()}
	d.setAsideDamaged()
	assert.Empty(t, damaged(t, dir))
	assert.FileExists(t, held)
	assert.FileExists(t, queueFile(dir, otlpDurable))
}

func TestConfigValidate(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Directory = t.TempDir()
	cfg.Compaction.Directory = cfg.Directory
	require.NoError(t, cfg.Validate())
	assert.Equal(t, SetAsideConfig{MaxFiles: 3, MaxBytes: 256 << 20}, cfg.SetAside)
	cfg.SetAside.MaxFiles = -1
	assert.ErrorContains(t, cfg.Validate(), "max_files")
	cfg.SetAside = SetAsideConfig{MaxBytes: -1}
	assert.ErrorContains(t, cfg.Validate(), "max_bytes")
}

// Files that are not file_storage's clients' are never read, renamed or
// deleted, whatever they hold: the directory may be shared.
func TestForeignFilesLeftAlone(t *testing.T) {
	dir := t.TempDir()
	foreign := []string{"notes.txt", "tempdb123", "lintian.cache.damaged", "other.backup"}
	for _, n := range foreign {
		garbage(t, filepath.Join(dir, n), 1000)
	}
	q, _ := start(t, dir, SetAsideConfig{})
	require.NoError(t, q.Shutdown(context.Background()))
	for _, n := range foreign {
		assert.FileExists(t, filepath.Join(dir, n))
	}
}

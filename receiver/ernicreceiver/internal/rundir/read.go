// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package rundir

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// ErrChanged marks a read during which the file was rewritten (its size or
// mtime moved between the start and the end of the read).
var ErrChanged = errors.New("file changed while it was read")

// Reader reads run-directory files whose writers truncate and rewrite them
// in place. It reuses one buffer across reads and is not safe for concurrent
// use.
type Reader struct {
	// MaxBytes bounds how much of one file is read; a larger file is an error.
	MaxBytes int64
	// Backoff is the pause before each retry of a torn read, one per retry.
	Backoff []time.Duration

	// Retries counts reads repeated because the one before was torn,
	// Failures the reads still torn after the last retry.
	Retries, Failures uint64

	buf  []byte
	peak int // the largest file read since the last Trim
	// manifest was parsed from manifestData: the same bytes are not parsed again.
	manifest     *Manifest
	manifestData []byte
	// Tests set these to change the file between reads and between open and read.
	sleep  func(time.Duration)
	opened func()
}

// DefaultBackoff retries a torn read three times within about 20 ms: the
// server writes a file in a few write(2) calls, whole a few ms later.
var DefaultBackoff = []time.Duration{2 * time.Millisecond, 5 * time.Millisecond, 12 * time.Millisecond}

// NewReader returns a Reader with the given size bound and DefaultBackoff.
func NewReader(maxBytes int64) *Reader {
	return &Reader{MaxBytes: maxBytes, Backoff: DefaultBackoff}
}

// ReadFile reads file name of dir once, into bytes that alias the Reader's
// buffer until the next call: a regular file of at most MaxBytes inside dir.
// The error wraps ErrChanged when size or mtime moved during the read.
func (r *Reader) ReadFile(dir *os.Root, name string) ([]byte, fs.FileInfo, error) {
	path := filepath.Join(dir.Name(), name)
	// O_NONBLOCK: opening a FIFO someone put in the run directory must not
	// block the scrape; on a regular file the flag changes nothing.
	f, err := dir.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			// The root's error names the file relative to it.
			return nil, nil, fmt.Errorf("%s: %w", path, pe.Err)
		}
		return nil, nil, err
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: not a regular file", path)
	}
	if before.Size() > r.MaxBytes {
		return nil, nil, fmt.Errorf("%s: %d bytes, over the limit of %d", path, before.Size(), r.MaxBytes)
	}
	if r.opened != nil {
		r.opened()
	}
	// The size at open is only a hint: the writer may be growing the file,
	// so the read stops one byte past MaxBytes and that byte is the error.
	limit := r.MaxBytes
	if limit < math.MaxInt64 {
		limit++ // no limit at all is MaxInt64, which must not wrap
	}
	if need := min(before.Size()+512, limit); int64(cap(r.buf)) < need {
		r.buf = make([]byte, 0, need)
	}
	data := r.buf[:0]
	for {
		if len(data) == cap(data) {
			if int64(len(data)) >= limit {
				return nil, nil, fmt.Errorf("%s: over the limit of %d bytes (it grew during the read)", path, r.MaxBytes)
			}
			grown := append(data, 0)[:len(data)]
			if int64(cap(grown)) > limit {
				grown = grown[:len(data):int(limit)]
			}
			data = grown
		}
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if int64(len(data)) > r.MaxBytes {
		return nil, nil, fmt.Errorf("%s: over the limit of %d bytes (it grew during the read)", path, r.MaxBytes)
	}
	r.buf = data
	r.peak = max(r.peak, len(data))
	after, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if after.Size() != int64(len(data)) || !after.ModTime().Equal(before.ModTime()) {
		return nil, nil, fmt.Errorf("%s: %w", path, ErrChanged)
	}
	return data, after, nil
}

const trimAbove = 1 << 20

// Trim lets a read buffer far larger than the files read since the last
// Trim go, so that one huge file does not keep its memory.
func (r *Reader) Trim() {
	if cap(r.buf) > trimAbove && cap(r.buf) > 4*r.peak {
		r.buf = nil
	}
	r.peak = 0
}

// ReadStats reads and parses a stats file, retrying while the read is torn:
// changed, incomplete, rejected by check (may be nil), or a multiple of
// StdioBuffer not confirmed by a second read (README.md §4). into, when not
// nil, is parsed into. A missing file fails at once.
func (r *Reader) ReadStats(ctx context.Context, dir *os.Root, name string, into *Stats, check func(*Stats) error) (*Stats, fs.FileInfo, error) {
	path := filepath.Join(dir.Name(), name)
	if into == nil {
		into = &Stats{}
	}
	var suspectSize int64 = -1
	var suspectTime time.Time
	var info fs.FileInfo
	err := r.retry(ctx, func() error {
		data, fi, err := r.ReadFile(dir, name)
		if err != nil {
			return err
		}
		mt := fi.ModTime()
		if err = ParseStatsInto(into, data); err == nil && check != nil {
			err = check(into)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		size := int64(len(data))
		if size%StdioBuffer == 0 && (size != suspectSize || !mt.Equal(suspectTime)) {
			suspectSize, suspectTime = size, mt
			return fmt.Errorf("%s: %w: %d bytes, a multiple of the writer's %d-byte buffer, not confirmed by a second read",
				path, ErrChanged, size, StdioBuffer)
		}
		info = fi
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return into, info, nil
}

// StdioBuffer is the size of the stdio buffer through which the server
// writes its stats file: a reader racing the writer sees the file cut at a
// multiple of it.
const StdioBuffer = 4096

// ReadManifest reads ManifestFile with ReadStats' retries; the same bytes as
// last time give a copy of that parse.
func (r *Reader) ReadManifest(ctx context.Context, dir *os.Root) (m *Manifest, err error) {
	path := filepath.Join(dir.Name(), ManifestFile)
	err = r.retry(ctx, func() error {
		data, _, err := r.ReadFile(dir, ManifestFile)
		if err != nil {
			return err
		}
		if r.manifest != nil && bytes.Equal(data, r.manifestData) {
			m = r.manifest.clone()
			return nil
		}
		if m, err = ParseManifest(data); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if cap(r.manifestData) > trimAbove && cap(r.manifestData) > 4*len(data) {
			r.manifestData = nil // a huge manifest replaced by a small one
		}
		r.manifest, r.manifestData = m.clone(), append(r.manifestData[:0], data...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// retry runs read until it succeeds, fails other than torn, the retries of
// r.Backoff are used up, or ctx ends.
func (r *Reader) retry(ctx context.Context, read func() error) error {
	var err error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if cerr := r.pause(ctx, r.Backoff[attempt-1]); cerr != nil {
				r.Failures++
				return errors.Join(err, cerr)
			}
			r.Retries++
		}
		err = read()
		if err == nil || !retryable(err) {
			return err
		}
		if attempt >= len(r.Backoff) {
			r.Failures++
			return err
		}
	}
}

func (r *Reader) pause(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.sleep != nil {
		r.sleep(d)
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ErrShrunk marks a complete stats file with fewer QP blocks or LIF counters
// than the same process wrote before: the read was cut.
var ErrShrunk = errors.New("stats file lost QP blocks or LIF counters")

func retryable(err error) bool {
	return errors.Is(err, ErrIncomplete) || errors.Is(err, ErrChanged) || errors.Is(err, ErrShrunk)
}

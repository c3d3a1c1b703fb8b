// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package rundir

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// DeviceKey indexes one device-level counter of the `Device Statistics:`
// section of a stats file.
type DeviceKey uint8

// Device counters, named after their stats-file keys. The first 15 are the
// current server's, in file order; the rest are older servers' names
// (rundir/README.md §3.4).
const (
	Commands       DeviceKey = iota // commands
	Bar0Reads                       // bar0_reads
	Bar0Writes                      // bar0_writes
	UARReads                        // uar_reads
	UARWrites                       // uar_writes
	MMIOReads                       // mmio_reads_total
	MMIOWrites                      // mmio_writes_total
	Interrupts                      // interrupts
	ResetCount                      // reset_count
	BytesSent                       // total_bytes_sent
	BytesReceived                   // total_bytes_received
	BytesRDMARead                   // total_bytes_rdma_read
	BytesRDMAWrite                  // total_bytes_rdma_write
	IPBytesTx                       // total_ip_bytes_tx
	IPBytesRx                       // total_ip_bytes_rx
	FLRResetCount                   // flr_reset_count (older servers)
	RegsReads                       // regs_reads (older servers)
	RegsWrites                      // regs_writes (older servers)
	// NumDeviceKeys is the number of DeviceKey values.
	NumDeviceKeys
)

var deviceKeyNames = [NumDeviceKeys]string{
	"commands", "bar0_reads", "bar0_writes", "uar_reads", "uar_writes",
	"mmio_reads_total", "mmio_writes_total", "interrupts", "reset_count",
	"total_bytes_sent", "total_bytes_received", "total_bytes_rdma_read",
	"total_bytes_rdma_write", "total_ip_bytes_tx", "total_ip_bytes_rx",
	"flr_reset_count", "regs_reads", "regs_writes",
}

// String returns the stats-file key of k.
func (k DeviceKey) String() string {
	if k < NumDeviceKeys {
		return deviceKeyNames[k]
	}
	return "DeviceKey(" + strconv.Itoa(int(k)) + ")"
}

// lookupDeviceKey returns the DeviceKey named key. A switch on the string
// compiles to a search by length and value, cheaper than a loop or a map
// (TestKeyLookups checks it against deviceKeyNames).
func lookupDeviceKey(key []byte) (DeviceKey, bool) {
	switch string(key) {
	case "commands":
		return Commands, true
	case "bar0_reads":
		return Bar0Reads, true
	case "bar0_writes":
		return Bar0Writes, true
	case "uar_reads":
		return UARReads, true
	case "uar_writes":
		return UARWrites, true
	case "mmio_reads_total":
		return MMIOReads, true
	case "mmio_writes_total":
		return MMIOWrites, true
	case "interrupts":
		return Interrupts, true
	case "reset_count":
		return ResetCount, true
	case "total_bytes_sent":
		return BytesSent, true
	case "total_bytes_received":
		return BytesReceived, true
	case "total_bytes_rdma_read":
		return BytesRDMARead, true
	case "total_bytes_rdma_write":
		return BytesRDMAWrite, true
	case "total_ip_bytes_tx":
		return IPBytesTx, true
	case "total_ip_bytes_rx":
		return IPBytesRx, true
	case "flr_reset_count":
		return FLRResetCount, true
	case "regs_reads":
		return RegsReads, true
	case "regs_writes":
		return RegsWrites, true
	}
	return 0, false
}

// QPKey indexes one counter of a `QP <handle>:` block.
type QPKey uint8

// Per-QP counters, named after their stats-file keys. The first eight are the
// current server's; DoorbellSRQ and Continuations appear in older files.
const (
	QPDoorbellSend   QPKey = iota // doorbell_send
	QPDoorbellRecv                // doorbell_recv
	QPWQEsProcessed               // wqes_processed
	QPCQEsPosted                  // cqes_posted
	QPBytesSent                   // bytes_sent
	QPBytesReceived               // bytes_received
	QPBytesRDMARead               // bytes_rdma_read
	QPBytesRDMAWrite              // bytes_rdma_write
	QPDoorbellSRQ                 // doorbell_srq (older servers)
	QPContinuations               // continuations (older servers)
	// NumQPKeys is the number of QPKey values.
	NumQPKeys
)

var qpKeyNames = [NumQPKeys]string{
	"doorbell_send", "doorbell_recv", "wqes_processed", "cqes_posted",
	"bytes_sent", "bytes_received", "bytes_rdma_read", "bytes_rdma_write",
	"doorbell_srq", "continuations",
}

// String returns the stats-file key of k.
func (k QPKey) String() string {
	if k < NumQPKeys {
		return qpKeyNames[k]
	}
	return "QPKey(" + strconv.Itoa(int(k)) + ")"
}

// lookupQPKey returns the QPKey named key (a switch, like lookupDeviceKey;
// TestKeyLookups checks it against qpKeyNames).
func lookupQPKey(key []byte) (QPKey, bool) {
	switch string(key) {
	case "doorbell_send":
		return QPDoorbellSend, true
	case "doorbell_recv":
		return QPDoorbellRecv, true
	case "wqes_processed":
		return QPWQEsProcessed, true
	case "cqes_posted":
		return QPCQEsPosted, true
	case "bytes_sent":
		return QPBytesSent, true
	case "bytes_received":
		return QPBytesReceived, true
	case "bytes_rdma_read":
		return QPBytesRDMARead, true
	case "bytes_rdma_write":
		return QPBytesRDMAWrite, true
	case "doorbell_srq":
		return QPDoorbellSRQ, true
	case "continuations":
		return QPContinuations, true
	}
	return 0, false
}

// Counter is one named unsigned 64-bit counter line (`name : N`).
type Counter struct {
	Name  string
	Value uint64
}

// Device holds the device-level counters of a stats file, indexed by
// DeviceKey; Has tells which keys the file printed.
type Device struct {
	values  [NumDeviceKeys]uint64
	present uint32
}

// Get returns the value of k and whether the file printed it.
func (d *Device) Get(k DeviceKey) (uint64, bool) {
	return d.values[k], d.present&(1<<k) != 0
}

func (d *Device) set(k DeviceKey, v uint64) bool {
	dup := d.present&(1<<k) != 0
	d.values[k] = v
	d.present |= 1 << k
	return !dup
}

// QP is one `QP <handle>:` block of the `Per-QP Statistics:` section.
type QP struct {
	// Handle is the decimal uint32 of the block header.
	Handle  uint32
	values  [NumQPKeys]uint64
	present uint16
	// Opcodes are the `WQEs by opcode:` lines in file order (only opcodes
	// whose count is > 0 are printed), without `(other opcodes)`.
	Opcodes []Counter
	// Other is the `(other opcodes)` value: wqes_processed minus the printed
	// opcodes, computed by the server in uint64 arithmetic, so a value near
	// 2^64 is a wrapped difference, not a count. HasOther tells whether the
	// line was printed.
	Other    uint64
	HasOther bool
}

// Get returns the value of k and whether the block printed it.
func (q *QP) Get(k QPKey) (uint64, bool) {
	return q.values[k], q.present&(1<<k) != 0
}

// Stats is one parsed <id>.stats file.
type Stats struct {
	// Instance: section, string values as printed (empty when absent).
	Socket, Backend, PCI, MAC string
	// Connection is the raw `connection` string; HasConnection is false when
	// the file has no such line (the state is then "unknown").
	Connection    string
	HasConnection bool
	// WriteCount is the `Write count : N` line: stats writes the server
	// process completed before this one.
	WriteCount    uint64
	HasWriteCount bool
	// Device holds the `Device Statistics:` counters.
	Device Device
	// QPs are the QP blocks in file order (the server's hash-table order).
	QPs []QP
	// LIF holds the ionic LIF counters: every key of a section whose header
	// starts with "LIF", and known LIF names met at device level; file order.
	LIF []Counter
	// Problems lists lines the parser could not use (a counter key with a
	// value that is not an unsigned 64-bit integer, a duplicate QP...). The
	// rest of the file is still usable.
	Problems []error

	// scratch is the parser's memory, kept for the next parse into the
	// same Stats (ParseStatsInto).
	scratch scratch
}

// scratch is what the parser allocates besides the result's lists.
type scratch struct {
	// ops backs the Opcodes of all QPs: each QP's Opcodes is a window of it.
	ops []Counter
	// qpBits has bit h set for each QP handle h < qpBitsLimit seen in the
	// file, and qpMap holds the larger ones: duplicate blocks are found
	// without hashing the usual small handles.
	qpBits []uint64
	qpMap  map[uint32]struct{}
	// lifPos is, for each LIF counter of LIFCounterNames, 1 + its index
	// in Stats.LIF (0: not seen yet), so that a known name printed twice
	// is found without searching the list.
	lifPos [len(LIFCounterNames)]int32
}

// qpBitsLimit bounds the handles kept in scratch.qpBits (8 KiB at most).
const qpBitsLimit = 1 << 16

// seenQP records handle h and reports whether it was recorded before.
func (sc *scratch) seenQP(h uint32) bool {
	if h >= qpBitsLimit {
		if _, dup := sc.qpMap[h]; dup {
			return true
		}
		if sc.qpMap == nil {
			sc.qpMap = make(map[uint32]struct{})
		}
		sc.qpMap[h] = struct{}{}
		return false
	}
	w := int(h / 64)
	if w >= len(sc.qpBits) {
		sc.qpBits = append(sc.qpBits, make([]uint64, w+1-len(sc.qpBits))...)
	}
	bit := uint64(1) << (h % 64)
	dup := sc.qpBits[w]&bit != 0
	sc.qpBits[w] |= bit
	return dup
}

// ErrIncomplete marks a stats file that is not a whole file of any known
// server format: empty, cut inside a line, or cut before its end
// (rundir/README.md §4). A reader racing the server's in-place rewrite sees such
// files; nothing from them may be published.
var ErrIncomplete = errors.New("incomplete file")

func incomplete(reason string) error {
	return fmt.Errorf("%w: %s", ErrIncomplete, reason)
}

// LineError is a problem with one line of a stats file.
type LineError struct {
	Line int // 1-based line number
	Msg  string
}

func (e *LineError) Error() string { return "line " + strconv.Itoa(e.Line) + ": " + e.Msg }

type section uint8

const (
	secPreamble section = iota
	secInstance
	secDevice
	secQPs
	secLIF
	secOther
)

const (
	headerDevice = "Device Statistics:"
	headerQPs    = "Per-QP Statistics:"
	noQPsLine    = "(no QPs created yet)"
	otherOpcodes = "(other opcodes)"
	wqesByOpcode = "WQEs by opcode:"
	writeCount   = "Write count"
)

// ParseStats parses a whole stats file. It returns an error wrapping
// ErrIncomplete when data is not a complete file (rundir/README.md §4): it must end with
// a newline, contain the `Per-QP Statistics:` header, and end either right
// after that header (or the old `(no QPs created yet)` line) or with an empty
// line; and the device section must hold the counters every server format
// prints. Problems with single lines do not fail the parse; they are listed
// in Stats.Problems.
func ParseStats(data []byte) (*Stats, error) {
	s := &Stats{}
	if err := ParseStatsInto(s, data); err != nil {
		return nil, err
	}
	return s, nil
}

// ParseStatsInto is ParseStats into s, reusing the memory of its QP, LIF
// and opcode lists: a reader that parses the same file every second
// allocates them once. Everything s held before is overwritten (the slices
// it returned before are reused, so the caller must be done with them); on
// error s holds no usable snapshot.
func ParseStatsInto(s *Stats, data []byte) error {
	return parseStats(s, data, true)
}

// parseStats parses data into s. memo enables the QP-line shortcut of
// lineMemo; the tests parse without it to check that it changes nothing.
func parseStats(s *Stats, data []byte, memo bool) error {
	sc := s.scratch
	sc.ops = sc.ops[:0]
	clear(sc.qpBits)
	clear(sc.qpMap)
	clear(sc.lifPos[:])
	*s = Stats{QPs: s.QPs[:0], LIF: s.LIF[:0]}
	defer func() { s.scratch = sc }()
	if len(data) == 0 {
		return incomplete("empty file")
	}
	if data[len(data)-1] != '\n' {
		return incomplete("file does not end with a newline (cut inside a line)")
	}
	if bytes.IndexByte(data, '\r') >= 0 {
		return errors.New("CR characters (CRLF line endings?): not a stats file of a known server format, whose lines end in LF")
	}
	var (
		sec       = secPreamble
		qp        *QP // current QP block, nil outside one
		inOpcodes bool
		sawQPs    bool
		lastLine  []byte // last non-empty stripped line
		lastRaw   []byte // the same line as written (column kept)
		lineNo    int
	)
	// The QP list, its duplicate index and the opcode lines of all QPs
	// (kept in one backing array; each QP's Opcodes is a window of it) grow
	// by appending, from what the last parse into s left: a few allocations
	// per file, not per QP, and none once s has seen the file.
	ops := sc.ops
	defer func() { sc.ops = ops }()
	opStart := 0
	// memos[i] is how line i of the last QP block was cut, and bi is the
	// index of the current line in its block.
	var memos [memoLines]lineMemo
	bi := 0
	for rest := data; len(rest) > 0; {
		if memo && qp != nil {
			// The indented `key : digits` lines of a QP block that the
			// memo cuts, in a tight loop: the general path below would
			// reach qpValue with the same key, looked up when the memo
			// learnt it.
			for len(rest) > 0 {
				if rest[0] == '\n' {
					// An empty line ends the block.
					lineNo++
					rest = rest[1:]
					qp, inOpcodes = nil, false
					break
				}
				if bi >= memoLines || !memos[bi].indented {
					break
				}
				// The line must be m.prefix, then one to 19 digits (20 may
				// overflow: the general path checks them) and '\n'; or,
				// for the opcode header, m.prefix and '\n'.
				m := &memos[bi]
				p := len(m.prefix)
				if p == 0 || len(rest) <= p || !bytes.Equal(rest[:p], m.prefix) {
					break
				}
				if m.bare {
					if rest[p] != '\n' {
						break
					}
					lineNo++
					lastRaw = rest[:p]
					lastLine = lastRaw[m.start:]
					inOpcodes = true
					rest = rest[p+1:]
					bi++
					continue
				}
				end := p
				var n uint64
				for ; end < len(rest); end++ {
					d := rest[end] - '0'
					if d > 9 {
						break
					}
					n = n*10 + uint64(d)
				}
				if end == p || end-p > 19 || end == len(rest) || rest[end] != '\n' {
					break
				}
				lineNo++
				lastRaw = rest[:end]
				lastLine = lastRaw[m.start:]
				if k := m.qpKey; !inOpcodes && m.qpKnown && qp.present&(1<<k) == 0 {
					// qpValue's common case, inline.
					qp.values[k] = n
					qp.present |= 1 << k
				} else {
					s.qpValue(qp, &ops, opStart, inOpcodes, m.key, m.qpKey, m.qpKnown, m.isOther, n, lineNo)
				}
				rest = rest[end+1:]
				bi++
			}
			if len(rest) == 0 {
				break
			}
		}
		lineNo++
		nl := bytes.IndexByte(rest, '\n')
		raw := rest[:nl]
		rest = rest[nl+1:]
		line, key, val, hasVal := cutLine(raw)
		if memo && qp != nil && bi < memoLines {
			memos[bi].learn(raw, line, key, val)
		}
		bi++
		if len(line) == 0 {
			// An empty line ends a QP block.
			qp, inOpcodes = nil, false
			continue
		}
		lastLine, lastRaw = line, raw
		column0 := raw[0] != ' ' && raw[0] != '\t'

		// Bare header at column 0: starts a section and closes any QP.
		if column0 && !hasVal && line[len(line)-1] == ':' {
			qp, inOpcodes = nil, false
			switch {
			case string(line) == "Instance:":
				sec = secInstance
			case string(line) == headerDevice:
				sec = secDevice
			case string(line) == headerQPs:
				sec = secQPs
				sawQPs = true
			case bytes.HasPrefix(line, []byte("LIF")):
				sec = secLIF
			default:
				sec = secOther
			}
			continue
		}
		if column0 && (hasVal && string(key) == writeCount || !hasVal && bytes.HasPrefix(line, []byte(writeCount+":"))) {
			// `Write count : N`, or `Write count: N` in older servers.
			if !hasVal {
				val = bytes.TrimSpace(line[len(writeCount)+1:])
			}
			n, ok := parseUint(val)
			if !ok {
				s.Problems = append(s.Problems, &LineError{lineNo, fmt.Sprintf("Write count %q is not an unsigned 64-bit integer", val)})
				continue
			}
			if s.HasWriteCount {
				s.duplicate(lineNo, writeCount)
			}
			s.WriteCount, s.HasWriteCount = n, true
			continue
		}

		switch sec {
		case secInstance:
			if !hasVal {
				continue
			}
			switch string(key) {
			case "socket":
				s.Socket = string(val)
			case "backend":
				s.Backend = string(val)
			case "pci":
				s.PCI = string(val)
			case "mac":
				s.MAC = string(val)
			case "connection":
				s.Connection, s.HasConnection = string(val), true
			}
		case secDevice:
			if !hasVal {
				continue
			}
			if _, ok := lifName(key); ok {
				s.addLIF(&sc, key, val, lineNo)
				continue
			}
			k, known := lookupDeviceKey(key)
			if !known {
				continue // a key a newer server added; not published
			}
			n, ok := parseUint(val)
			if !ok {
				s.Problems = append(s.Problems, &LineError{lineNo, fmt.Sprintf("device counter %s: %q is not an unsigned 64-bit integer", key, val)})
				continue
			}
			if !s.Device.set(k, n) {
				s.duplicate(lineNo, "device counter "+string(key))
			}
		case secQPs:
			h, isHeader, ok := qpHeader(line)
			if isHeader && !ok {
				s.Problems = append(s.Problems, &LineError{lineNo, fmt.Sprintf("QP header %q: the handle is not a decimal uint32; block ignored", line)})
				qp, inOpcodes = nil, false
				continue
			}
			if isHeader {
				inOpcodes = false
				if sc.seenQP(h) {
					s.Problems = append(s.Problems, &LineError{lineNo, "QP " + strconv.FormatUint(uint64(h), 10) + " printed twice; the second block is ignored"})
					qp = nil
					continue
				}
				s.QPs = append(s.QPs, QP{Handle: h})
				qp = &s.QPs[len(s.QPs)-1]
				bi = 0
				opStart = len(ops)
				continue
			}
			if qp == nil {
				continue // `(no QPs created yet)`, or lines of an ignored block
			}
			if !hasVal {
				if string(line) == wqesByOpcode {
					inOpcodes = true
					continue
				}
				if inOpcodes {
					// Older servers print `NAME: N` for 20- and 21-character names.
					if i := bytes.LastIndexByte(line, ':'); i > 0 {
						key, val, hasVal = bytes.TrimSpace(line[:i]), bytes.TrimSpace(line[i+1:]), true
					}
				}
				if !hasVal {
					continue
				}
			}
			n, ok := parseUint(val)
			if !ok {
				s.Problems = append(s.Problems, &LineError{lineNo, fmt.Sprintf("QP %d %s: %q is not an unsigned 64-bit integer", qp.Handle, key, val)})
				continue
			}
			k, known := lookupQPKey(key)
			s.qpValue(qp, &ops, opStart, inOpcodes, key, k, known, string(key) == otherOpcodes, n, lineNo)
		case secLIF:
			if hasVal {
				s.addLIF(&sc, key, val, lineNo)
			}
		}
	}

	if !sawQPs {
		return incomplete("no \"" + headerQPs + "\" header")
	}
	// A whole file ends right after the QP header (or the old no-QPs line)
	// or with an empty line after its last block or trailing section.
	endsBlank := len(data) >= 2 && data[len(data)-2] == '\n'
	// The header counts only at column 0, and the old no-QPs line only
	// right under it (no QP opened): the same words inside a QP block are
	// not an end.
	endsHeader := string(lastRaw) == headerQPs ||
		(string(lastLine) == noQPsLine && sec == secQPs && len(s.QPs) == 0)
	if !endsBlank && !endsHeader {
		return incomplete("file does not end with an empty line (cut inside a block)")
	}
	for _, group := range requiredDevice {
		found := false
		for _, k := range group {
			if _, ok := s.Device.Get(k); ok {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("device counter %s missing: not a stats file of a known server format", group[0])
		}
	}
	return nil
}

// qpValue applies the `key : n` line lineNo of the block of qp: an opcode
// count when inOpcodes (isOther: the `(other opcodes)` line), else the
// counter k when known. ops backs the opcode lists, and the block's start
// at opStart. A key printed twice in the block is reported; its last value
// is kept.
func (s *Stats) qpValue(qp *QP, ops *[]Counter, opStart int, inOpcodes bool, key []byte, k QPKey, known, isOther bool, n uint64, lineNo int) {
	if inOpcodes {
		if isOther {
			if qp.HasOther {
				s.duplicate(lineNo, fmt.Sprintf("QP %d %s", qp.Handle, key))
			}
			qp.Other, qp.HasOther = n, true
			return
		}
		if !setCounter(ops, opStart, key, n, opcodeName) {
			s.duplicate(lineNo, fmt.Sprintf("QP %d opcode %s", qp.Handle, key))
		}
		qp.Opcodes = (*ops)[opStart:len(*ops):len(*ops)]
		return
	}
	if known {
		if qp.present&(1<<k) != 0 {
			s.duplicate(lineNo, fmt.Sprintf("QP %d %s", qp.Handle, key))
		}
		qp.values[k] = n
		qp.present |= 1 << k
	}
}

// requiredDevice lists the device counters every known server format prints
// (any one key of each group).
var requiredDevice = [][]DeviceKey{
	{Commands}, {Interrupts}, {ResetCount, FLRResetCount},
	{MMIOReads, RegsReads}, {MMIOWrites, RegsWrites},
	{BytesSent}, {BytesReceived}, {BytesRDMARead}, {BytesRDMAWrite},
}

func (s *Stats) addLIF(sc *scratch, key, val []byte, lineNo int) {
	n, ok := parseUint(val)
	if !ok {
		s.Problems = append(s.Problems, &LineError{lineNo, fmt.Sprintf("LIF counter %s: %q is not an unsigned 64-bit integer", key, val)})
		return
	}
	name, i, known := lifIndex.lookup(key)
	if !known {
		// A name the ionic driver may have added: searched for.
		if !setCounter(&s.LIF, 0, key, n, lifCounterName) {
			s.duplicate(lineNo, "LIF counter "+string(key))
		}
		return
	}
	if p := sc.lifPos[i]; p > 0 {
		s.LIF[p-1].Value = n
		s.duplicate(lineNo, "LIF counter "+name)
		return
	}
	s.LIF = append(s.LIF, Counter{Name: name, Value: n})
	sc.lifPos[i] = int32(len(s.LIF))
}

// duplicate records a key printed twice in one scope: the last value is
// used, never the sum.
func (s *Stats) duplicate(lineNo int, what string) {
	s.Problems = append(s.Problems, &LineError{lineNo, what + " printed twice; the last value is used"})
}

// setCounter sets the counter named key among (*cs)[from:], appending it
// (named by name(key)) when absent; false when it was already there. The
// lists are short (at most 19 opcodes of a QP, about 74 LIF counters), so a
// linear search is cheaper than a map.
func setCounter(cs *[]Counter, from int, key []byte, v uint64, name func([]byte) string) bool {
	for i := from; i < len(*cs); i++ {
		if (*cs)[i].Name == string(key) {
			(*cs)[i].Value = v
			return false
		}
	}
	*cs = append(*cs, Counter{Name: name(key), Value: v})
	return true
}

// qpHeader recognises a `QP <handle>:` line (isHeader) and parses its
// handle, a decimal uint32 (ok).
func qpHeader(line []byte) (handle uint32, isHeader, ok bool) {
	if len(line) < 4 || line[0] != 'Q' || line[1] != 'P' || line[2] != ' ' || line[len(line)-1] != ':' {
		return 0, false, false
	}
	n, ok := parseUint(bytes.TrimSpace(line[3 : len(line)-1]))
	if !ok || n > 1<<32-1 {
		return 0, true, false
	}
	return uint32(n), true, true
}

// parseUint parses an unsigned decimal without sign or separators; it fails
// on anything else and on values above 2^64-1.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var n uint64
	if len(b) < 20 {
		// At most 19 digits cannot overflow: 10^19-1 < 2^64-1.
		for _, c := range b {
			d := c - '0'
			if d > 9 {
				return 0, false
			}
			n = n*10 + uint64(d)
		}
		return n, true
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

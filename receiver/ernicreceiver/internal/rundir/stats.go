// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package rundir

import (
	"errors"
	"fmt"
	"strconv"
)

// DeviceKey indexes one counter of the `Device Statistics:` section.
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

// numCurrentDeviceKeys counts the current server's device keys, the first
// of deviceKeyNames (internal/sim's DeviceKeys are generated from them).
const numCurrentDeviceKeys = IPBytesRx + 1

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

// lookupDeviceKey returns the DeviceKey named key: a switch is cheaper than
// a map (TestKeyLookups checks it against deviceKeyNames).
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

// requiredDevice lists the device counters every known server format prints
// (any one key of each group).
var requiredDevice = [][]DeviceKey{
	{Commands}, {Interrupts}, {ResetCount, FLRResetCount},
	{MMIOReads, RegsReads}, {MMIOWrites, RegsWrites},
	{BytesSent}, {BytesReceived}, {BytesRDMARead}, {BytesRDMAWrite},
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

// lookupQPKey is a switch, like lookupDeviceKey.
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
// DeviceKey; Get tells which keys the file printed.
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
	// Other is `(other opcodes)`, derived by the server in uint64: a value near
	// 2^64 is a wrapped difference. HasOther: the line was printed.
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
	// Connection is the raw `connection` string; HasConnection: it was printed.
	Connection    string
	HasConnection bool
	// WriteCount is `Write count : N`, the writes the process completed before.
	WriteCount    uint64
	HasWriteCount bool
	// Device holds the `Device Statistics:` counters.
	Device Device
	// QPs are the QP blocks in file order (the server's hash-table order).
	QPs []QP
	// LIF holds the ionic LIF counters (README.md §3.2), in file order.
	LIF []Counter
	// Problems lists lines the parser could not use; the rest is usable.
	Problems []error

	// scratch is kept for the next parse into the same Stats.
	scratch scratch
}

type scratch struct {
	ops []Counter // backs every QP's Opcodes
	// qpBits marks handles below qpBitsLimit, qpMap larger ones: no hashing.
	qpBits []uint64
	qpMap  map[uint32]struct{}
	// lifPos is 1 + the index in Stats.LIF of each known LIF counter (0: unseen).
	lifPos [len(LIFCounterNames)]int32
}

const qpBitsLimit = 1 << 16

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

// instanceLine records one `key : value` line of `Instance:`.
func (s *Stats) instanceLine(key, val []byte) {
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
}

// qpValue applies a `key : n` line of qp's block: an opcode count when
// inOpcodes, else the counter k when known. A key printed twice is reported.
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

// addLIF records the LIF counter key; a key printed twice is reported.
func (s *Stats) addLIF(sc *scratch, key []byte, n uint64, lineNo int) {
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

// setCounter sets the counter key among (*cs)[from:], appending it when
// absent (false when present). The lists are short: linear beats a map.
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

// ErrIncomplete marks a stats file that is not whole by any known server
// format (README.md §4), as a reader racing the rewrite sees it.
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

// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// ChaosRecord is one line of the JSON log. Event is "write" (a complete
// stats write), "fault" (an injected fault), "fault-end" (a lasting fault
// undone), "restart" (a real restart: Kind is hot-reload, crash-recovery or
// pid-reuse-recovery) or "skip" (a kind that cannot be injected here).
type ChaosRecord struct {
	Time   time.Time `json:"t"`
	Event  string    `json:"ev"`
	Kind   string    `json:"kind,omitempty"`
	ID     int       `json:"id,omitempty"`
	PID    int       `json:"pid,omitempty"`
	OldPID int       `json:"old_pid,omitempty"`
	// Gen is the instance's server generation: 0 for its first process, +1
	// at every real restart.
	Gen    int    `json:"gen"`
	Detail string `json:"detail,omitempty"`
	// QP is the handle a qp-reuse or wrap-other fault changed.
	QP uint32 `json:"qp,omitempty"`
	// Value is the value an invalid-utf8 fault gave its counter.
	Value uint64 `json:"value,omitempty"`

	// Of a write:
	WriteCount uint64             `json:"write_count"`
	Connection string             `json:"conn,omitempty"`
	QPCount    int                `json:"qp_count"`
	Device     map[string]uint64  `json:"device,omitempty"` // the 15 keys as printed
	QPs        map[uint32]ChaosQP `json:"qps,omitempty"`    // handles below ChaosSampleQPBelow
	LIF        map[string]uint64  `json:"lif,omitempty"`    // ChaosSampleLIF
}

// ChaosQP is one QP of a write record.
type ChaosQP struct {
	// Epoch counts the qp-reuse drops of this handle in this process.
	Epoch    int               `json:"epoch"`
	Counters map[string]uint64 `json:"counters"` // the eight QP keys
	// Opcodes are the printed opcode lines; "other" is the (other opcodes)
	// line as printed (wrapped near 2^64 when the sum is larger).
	Opcodes map[string]uint64 `json:"opcodes,omitempty"`
}

func (c *Chaos) emit(r ChaosRecord) {
	if c.o.Events == nil {
		return
	}
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	b = append(b, '\n')
	c.evMu.Lock()
	defer c.evMu.Unlock()
	_, _ = c.o.Events.Write(b)
}

// fault logs an injected fault (JSON record and a text line on the Sim's
// Log) and counts it. Called with s.mu held.
func (c *Chaos) fault(kind string, in *inst, format string, args ...any) {
	c.faultQP(kind, in, 0, format, args...)
}

// faultQP is fault for a fault aimed at QP handle qp.
func (c *Chaos) faultQP(kind string, in *inst, qp uint32, format string, args ...any) {
	c.faultRecord(ChaosRecord{Kind: kind, QP: qp, Detail: fmt.Sprintf(format, args...)}, in)
}

// faultRecord logs r as an injected fault of instance in (may be nil) and
// counts it. Called with s.mu held.
func (c *Chaos) faultRecord(r ChaosRecord, in *inst) {
	kind, detail := r.Kind, r.Detail
	r.Event = "fault"
	if in != nil {
		r.ID, r.PID, r.Gen = in.ID, in.PID, in.gen
	}
	c.counts.Faults[kind]++
	c.emit(r)
	c.s.logf("fault %s id=%d %s", kind, r.ID, detail)
}

// faultEnd logs the end of a lasting fault. Called with s.mu held.
func (c *Chaos) faultEnd(kind string, in *inst) {
	r := ChaosRecord{Event: "fault-end", Kind: kind}
	if in != nil {
		r.ID, r.PID, r.Gen = in.ID, in.PID, in.gen
	}
	c.emit(r)
}

// logWrite is the Sim's write hook: one "write" record per complete stats
// write. Called with s.mu held.
func (c *Chaos) logWrite(in *inst, st *Stats) { c.logWriteAt(in, st, time.Now()) }

// logWriteAt is called with s.mu held.
func (c *Chaos) logWriteAt(in *inst, st *Stats, at time.Time) {
	c.counts.Writes++
	if c.o.Events == nil {
		return
	}
	r := ChaosRecord{
		Time: at, Event: "write", ID: in.ID, PID: in.PID, Gen: in.gen,
		WriteCount: st.WriteCount, Connection: st.Connection, QPCount: len(st.QPs),
	}
	r.Device = make(map[string]uint64, len(DeviceKeys))
	for i, v := range st.Device.values() {
		r.Device[DeviceKeys[i]] = v
	}
	for i := range st.QPs {
		q := &st.QPs[i]
		if q.Handle >= ChaosSampleQPBelow {
			continue
		}
		if r.QPs == nil {
			r.QPs = map[uint32]ChaosQP{}
		}
		cq := ChaosQP{
			Epoch: c.epochs[in.ID][q.Handle],
			Counters: map[string]uint64{
				"doorbell_send": q.DoorbellSend, "doorbell_recv": q.DoorbellRecv,
				"wqes_processed": q.WQEsProcessed, "cqes_posted": q.CQEsPosted,
				"bytes_sent": q.BytesSent, "bytes_received": q.BytesReceived,
				"bytes_rdma_read": q.BytesRDMARead, "bytes_rdma_write": q.BytesRDMAWrite,
			},
		}
		var sum uint64
		for _, op := range q.Opcodes {
			sum += op.Value
			if op.Value > 0 {
				if cq.Opcodes == nil {
					cq.Opcodes = map[string]uint64{}
				}
				cq.Opcodes[op.Name] = op.Value
			}
		}
		if q.Other {
			if cq.Opcodes == nil {
				cq.Opcodes = map[string]uint64{}
			}
			cq.Opcodes["other"] = q.WQEsProcessed - sum // wraps like the file
		}
		r.QPs[q.Handle] = cq
	}
	if len(st.LIF) > 0 {
		r.LIF = map[string]uint64{}
		for _, l := range st.LIF {
			if slices.Contains(ChaosSampleLIF, l.Name) {
				r.LIF[l.Name] = l.Value
			}
		}
	}
	c.emit(r)
}

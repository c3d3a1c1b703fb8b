// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"math/rand/v2"
	"slices"
)

// Counter engine: one per server process, deterministic for (seed, id, gen).

// Opcode indexes into OpcodeNames.
const (
	opRDMAWrite    = 0
	opRDMAWriteImm = 1
	opSend         = 2
	opSendImm      = 3
	opRDMARead     = 4
	opAtomicCAS    = 5
	opAtomicFAA    = 6
)

// QP traffic profiles.
const (
	profWriter = iota // RDMA_WRITE bulk plus small SEND notifications
	profReader        // RDMA_READ only
	profSender        // SEND / SEND_WITH_IMM both ways
	profMixed         // RDMA_WRITE_WITH_IMM, RDMA_READ, atomics
	numProfiles
)

// roceOverhead is the per-packet IP+UDP+BTH+ICRC(+RETH) overhead in bytes.
const roceOverhead = 58

// mtu is the RoCE path MTU in bytes.
const mtu = 4096

var lifIndex = func() map[string]int {
	m := make(map[string]int, len(LIFNames))
	for i, n := range LIFNames {
		m[n] = i
	}
	return m
}()

// lifErrorNames are the RDMA error counters that move now and then.
var lifErrorNames = [...]string{
	"rdma_req_rx_pkt_seq_err",
	"rdma_req_rx_rnr_retry_err",
	"rdma_req_rx_implied_nak_seq_err",
	"rdma_resp_rx_dup_requests",
	"rdma_resp_rx_out_of_seq_pkts",
	"rdma_resp_rx_out_of_buffer",
}

type qpSim struct {
	handle     uint32
	profile    int
	size       uint64  // payload bytes per data WQE
	rate       float64 // data WQEs per second when busy
	batch      uint64  // WQEs per doorbell
	busy       float64 // probability of traffic on a tick
	otherProne bool    // gets WQEs with opcodes outside the 18 names

	dbSend, dbRecv, wqes, cqes uint64
	sent, recv, rread, rwrite  uint64
	ops                        [len(OpcodeNames)]uint64
	other                      uint64
}

// qpDelta is what one QP did during one tick.
type qpDelta struct {
	doorbells, cqes              uint64
	sent, recv, rread, rwrite    uint64
	txPay, rxPay, txPkts, rxPkts uint64
}

type engine struct {
	rng     *rand.Rand
	secs    float64
	target  int
	steps   uint64
	handles []uint32 // unused QP handles, in creation order
	dev     Device
	qps     []*qpSim // in hash order
	lif     [len(LIFNames)]uint64
}

func newEngine(seed int64, id, gen, target int, secs float64) *engine {
	e := &engine{
		rng:    rand.New(rand.NewPCG(uint64(seed), uint64(id)<<20|uint64(gen))),
		secs:   secs,
		target: target,
	}
	n := max(3*target, 8)
	for _, h := range e.rng.Perm(n) {
		e.handles = append(e.handles, uint32(h+2))
	}
	return e
}

// qpHash orders QPs like a hash table would: not sorted, stable per handle.
func qpHash(h uint32) uint32 { return h * 2654435761 }

func (e *engine) newQP() {
	h := e.handles[0]
	e.handles = e.handles[1:]
	r := e.rng
	q := &qpSim{
		handle:     h,
		profile:    r.IntN(numProfiles),
		size:       uint64(1) << (12 + r.IntN(9)), // 4 KiB .. 1 MiB
		rate:       50 + 450*r.Float64(),
		batch:      uint64(1 + r.IntN(4)),
		busy:       0.6 + 0.4*r.Float64(),
		otherProne: r.IntN(4) == 0,
	}
	i, _ := slices.BinarySearchFunc(e.qps, qpHash(h), func(x *qpSim, k uint32) int {
		return cmpU32(qpHash(x.handle), k)
	})
	e.qps = slices.Insert(e.qps, i, q)
}

func cmpU32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (e *engine) addLIF(name string, v uint64) {
	i, ok := lifIndex[name]
	if !ok {
		panic("sim: unknown LIF counter " + name)
	}
	e.lif[i] += v
}

// step advances all counters by one tick; every counter only grows.
func (e *engine) step(reset bool) {
	r := e.rng
	e.steps++
	var cmds uint64
	if e.steps == 1 {
		cmds += 12 // device bring-up: identify, init, PD, CQs, MRs...
	}
	add := (e.target + 3) / 4
	for i := 0; i < add && len(e.qps) < e.target; i++ {
		e.newQP()
		cmds += 3 // create_qp + two modify_qp
	}
	if r.IntN(10) == 0 {
		cmds++
	}

	var t qpDelta
	for _, q := range e.qps {
		d := q.step(r, e.secs)
		t.doorbells += d.doorbells
		t.cqes += d.cqes
		t.sent += d.sent
		t.recv += d.recv
		t.rread += d.rread
		t.rwrite += d.rwrite
		t.txPay += d.txPay
		t.rxPay += d.rxPay
		t.txPkts += d.txPkts
		t.rxPkts += d.rxPkts
	}

	dv := &e.dev
	intr := (t.cqes + 15) / 16
	if cmds > 0 {
		intr++ // admin queue completion
	}
	if reset {
		dv.ResetCount++
		cmds += 4
		dv.Bar0Writes += 16
		dv.Bar0Reads += 8
	}
	dv.Commands += cmds
	dv.Interrupts += intr
	dv.UARWrites += t.doorbells + intr // doorbells + CQ re-arms
	dv.Bar0Reads += 4 + r.Uint64N(8) + 2*cmds
	dv.Bar0Writes += 3*cmds + intr
	if r.IntN(20) == 0 {
		dv.UARReads++
	}
	dv.BytesSent += t.sent
	dv.BytesReceived += t.recv
	dv.BytesRDMARead += t.rread
	dv.BytesRDMAWrite += t.rwrite
	ipTx := t.txPay + t.txPkts*roceOverhead
	ipRx := t.rxPay + t.rxPkts*roceOverhead
	dv.IPBytesTx += ipTx
	dv.IPBytesRx += ipRx

	// LIF: RoCE traffic plus a little plain Ethernet (ssh, ARP, mDNS).
	e.addLIF("tx_rdma_ucast_bytes", ipTx)
	e.addLIF("tx_rdma_ucast_packets", t.txPkts)
	e.addLIF("rx_rdma_ucast_bytes", ipRx)
	e.addLIF("rx_rdma_ucast_packets", t.rxPkts)
	ethTxPkts := uint64(1 + r.IntN(5))
	ethRxPkts := uint64(1 + r.IntN(5))
	e.addLIF("tx_ucast_packets", t.txPkts+ethTxPkts)
	e.addLIF("tx_ucast_bytes", ipTx+14*t.txPkts+ethTxPkts*uint64(60+r.IntN(1400)))
	e.addLIF("rx_ucast_packets", t.rxPkts+ethRxPkts)
	e.addLIF("rx_ucast_bytes", ipRx+14*t.rxPkts+ethRxPkts*uint64(60+r.IntN(1400)))
	if r.IntN(5) == 0 {
		e.addLIF("rx_bcast_packets", 1)
		e.addLIF("rx_bcast_bytes", 60)
	}
	if r.IntN(10) == 0 {
		e.addLIF("rx_mcast_packets", 1)
		e.addLIF("rx_mcast_bytes", 90)
	}
	if r.IntN(20) == 0 {
		e.addLIF("tx_mcast_packets", 1)
		e.addLIF("tx_mcast_bytes", 90)
	}
	if r.IntN(10) == 0 {
		n := uint64(1 + r.IntN(5))
		e.addLIF("rx_rdma_ecn_packets", n)
		e.addLIF("tx_rdma_cnp_packets", n)
	}
	if r.IntN(10) == 0 {
		e.addLIF("rx_rdma_cnp_packets", uint64(1+r.IntN(3)))
	}
	if r.IntN(20) == 0 {
		e.addLIF(lifErrorNames[r.IntN(len(lifErrorNames))], uint64(1+r.IntN(2)))
	}
}

func (q *qpSim) step(r *rand.Rand, secs float64) qpDelta {
	var d qpDelta
	if r.Float64() >= q.busy {
		return d
	}
	n := uint64(q.rate*secs*(0.5+r.Float64())) + 1
	var sq [len(OpcodeNames)]uint64
	var recvs, responses uint64
	switch q.profile {
	case profWriter:
		sq[opRDMAWrite] = n
		sq[opSend] = n/8 + 1
		d.rwrite = n * q.size
		d.sent = sq[opSend] * 64
		recvs = sq[opSend]
		d.recv = recvs * 64
	case profReader:
		sq[opRDMARead] = n
		d.rread = n * q.size
		responses = n
	case profSender:
		sq[opSend] = n
		sq[opSendImm] = n / 4
		d.sent = (sq[opSend] + sq[opSendImm]) * q.size
		recvs = n
		d.recv = n * q.size
	case profMixed:
		sq[opRDMAWriteImm] = n/2 + 1
		sq[opRDMARead] = n / 4
		if r.IntN(3) == 0 {
			sq[opAtomicFAA] = 1 + r.Uint64N(4)
		}
		if r.IntN(5) == 0 {
			sq[opAtomicCAS] = 1 + r.Uint64N(2)
		}
		d.rwrite = sq[opRDMAWriteImm] * q.size
		d.rread = sq[opRDMARead]*q.size + (sq[opAtomicFAA]+sq[opAtomicCAS])*8
		recvs = sq[opRDMAWriteImm]
		responses = sq[opRDMARead] + sq[opAtomicFAA] + sq[opAtomicCAS]
	}
	var other uint64
	if q.otherProne && r.IntN(3) == 0 {
		other = 1 + r.Uint64N(3)
	}
	var sqOps uint64
	for i, v := range sq {
		q.ops[i] += v
		sqOps += v
	}
	q.other += other
	q.wqes += sqOps + other
	dbSend := (sqOps + other + q.batch - 1) / q.batch
	dbRecv := (recvs + q.batch - 1) / q.batch
	q.dbSend += dbSend
	q.dbRecv += dbRecv
	d.doorbells = dbSend + dbRecv
	// A few completions may still be pending at the time of the write.
	if cq := q.wqes - min(r.Uint64N(4), q.wqes); cq > q.cqes {
		d.cqes = cq - q.cqes
		q.cqes = cq
	}
	q.sent += d.sent
	q.recv += d.recv
	q.rread += d.rread
	q.rwrite += d.rwrite
	d.txPay = d.sent + d.rwrite
	d.rxPay = d.recv + d.rread
	d.txPkts = d.txPay/mtu + sqOps + other
	d.rxPkts = d.rxPay/mtu + recvs + responses + (sqOps+3)/4 // + ACKs
	return d
}

// stats renders the engine's counters. QPs are printed in hash order rotated
// by rot, so the order is not stable between writes (like the server's).
func (e *engine) stats(rot uint64, lif bool) Stats {
	var st Stats
	st.Device = e.dev
	n := len(e.qps)
	for i := range n {
		q := e.qps[(uint64(i)+rot)%uint64(n)]
		qp := QP{
			Handle:         q.handle,
			DoorbellSend:   q.dbSend,
			DoorbellRecv:   q.dbRecv,
			WQEsProcessed:  q.wqes,
			CQEsPosted:     q.cqes,
			BytesSent:      q.sent,
			BytesReceived:  q.recv,
			BytesRDMARead:  q.rread,
			BytesRDMAWrite: q.rwrite,
			Other:          q.other > 0,
		}
		for j, v := range q.ops {
			if v > 0 {
				qp.Opcodes = append(qp.Opcodes, Counter{Name: OpcodeNames[j], Value: v})
			}
		}
		st.QPs = append(st.QPs, qp)
	}
	if lif {
		st.LIF = make([]Counter, len(LIFNames))
		for i, name := range LIFNames {
			st.LIF[i] = Counter{Name: name, Value: e.lif[i]}
		}
	}
	return st
}

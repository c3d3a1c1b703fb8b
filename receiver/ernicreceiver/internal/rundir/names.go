// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package rundir

// LIFCounterNames are the 74 counters of `struct ionic_lif_stats` (the
// kernel's ionic_if.h) in struct order (README.md §3.2); sim.LIFNames is
// generated from it (make generate).
var LIFCounterNames = [...]string{
	// Ethernet traffic and drops, rx (qwords 0..14).
	"rx_ucast_bytes",
	"rx_ucast_packets",
	"rx_mcast_bytes",
	"rx_mcast_packets",
	"rx_bcast_bytes",
	"rx_bcast_packets",
	"rx_ucast_drop_bytes",
	"rx_ucast_drop_packets",
	"rx_mcast_drop_bytes",
	"rx_mcast_drop_packets",
	"rx_bcast_drop_bytes",
	"rx_bcast_drop_packets",
	"rx_dma_error",
	// Ethernet traffic and drops, tx (qwords 16..30).
	"tx_ucast_bytes",
	"tx_ucast_packets",
	"tx_mcast_bytes",
	"tx_mcast_packets",
	"tx_bcast_bytes",
	"tx_bcast_packets",
	"tx_ucast_drop_bytes",
	"tx_ucast_drop_packets",
	"tx_mcast_drop_bytes",
	"tx_mcast_drop_packets",
	"tx_bcast_drop_bytes",
	"tx_bcast_drop_packets",
	"tx_dma_error",
	// Ring errors (qwords 32..44).
	"rx_queue_disabled",
	"rx_queue_empty",
	"rx_queue_error",
	"rx_desc_fetch_error",
	"rx_desc_data_error",
	"tx_queue_disabled",
	"tx_queue_error",
	"tx_desc_fetch_error",
	"tx_desc_data_error",
	"tx_queue_empty",
	// RDMA traffic (qwords 48..61).
	"tx_rdma_ucast_bytes",
	"tx_rdma_ucast_packets",
	"tx_rdma_mcast_bytes",
	"tx_rdma_mcast_packets",
	"tx_rdma_cnp_packets",
	"rx_rdma_ucast_bytes",
	"rx_rdma_ucast_packets",
	"rx_rdma_mcast_bytes",
	"rx_rdma_mcast_packets",
	"rx_rdma_cnp_packets",
	"rx_rdma_ecn_packets",
	// RDMA errors, requester (qwords 96..108).
	"rdma_req_rx_pkt_seq_err",
	"rdma_req_rx_rnr_retry_err",
	"rdma_req_rx_remote_access_err",
	"rdma_req_rx_remote_inv_req_err",
	"rdma_req_rx_remote_oper_err",
	"rdma_req_rx_implied_nak_seq_err",
	"rdma_req_rx_cqe_err",
	"rdma_req_rx_cqe_flush_err",
	"rdma_req_rx_dup_responses",
	"rdma_req_rx_invalid_packets",
	"rdma_req_tx_local_access_err",
	"rdma_req_tx_local_oper_err",
	"rdma_req_tx_memory_mgmt_err",
	// RDMA errors, responder (qwords 112..125).
	"rdma_resp_rx_dup_requests",
	"rdma_resp_rx_out_of_buffer",
	"rdma_resp_rx_out_of_seq_pkts",
	"rdma_resp_rx_cqe_err",
	"rdma_resp_rx_cqe_flush_err",
	"rdma_resp_rx_local_len_err",
	"rdma_resp_rx_inv_request_err",
	"rdma_resp_rx_local_qp_oper_err",
	"rdma_resp_rx_out_of_atomic_resource",
	"rdma_resp_tx_pkt_seq_err",
	"rdma_resp_tx_remote_inv_req_err",
	"rdma_resp_tx_remote_access_err",
	"rdma_resp_tx_remote_oper_err",
	"rdma_resp_tx_rnr_retry_err",
}

// Opcodes are the 18 WQE opcode names the server prints under
// `WQEs by opcode:` (rundir/README.md §3.2). Other names are kept as printed.
var Opcodes = [...]string{
	"RDMA_WRITE", "RDMA_WRITE_WITH_IMM", "SEND", "SEND_WITH_IMM", "RDMA_READ",
	"ATOMIC_CMP_AND_SWP", "ATOMIC_FETCH_AND_ADD", "LSO", "SEND_WITH_INV",
	"RDMA_READ_WITH_INV", "LOCAL_INV", "FAST_REG_MR", "MASKED_ATOMIC_CMP_SWP",
	"MASKED_ATOMIC_FETCH", "BIND_MW", "REG_SIG_MR", "ERROR", "SEND_DC",
}

var (
	lifIndex    = newInterner(LIFCounterNames[:])
	opcodeIndex = newInterner(Opcodes[:])
)

// interner finds a name of a fixed list by length, then compare, unhashed.
type interner [][]interned

type interned struct {
	name  string
	index int
}

func newInterner(names []string) interner {
	var in interner
	for i, n := range names {
		for len(in) <= len(n) {
			in = append(in, nil)
		}
		in[len(n)] = append(in[len(n)], interned{n, i})
	}
	return in
}

func (in interner) lookup(key []byte) (string, int, bool) {
	if len(key) >= len(in) {
		return "", -1, false
	}
	for _, e := range in[len(key)] {
		if e.name == string(key) {
			return e.name, e.index, true
		}
	}
	return "", -1, false
}

func lifName(key []byte) (string, bool) {
	n, _, ok := lifIndex.lookup(key)
	return n, ok
}

func lifCounterName(key []byte) string {
	if n, _, ok := lifIndex.lookup(key); ok {
		return n
	}
	return string(key)
}

func opcodeName(key []byte) string {
	if n, _, ok := opcodeIndex.lookup(key); ok {
		return n
	}
	return string(key)
}

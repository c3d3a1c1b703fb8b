// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import dto "github.com/prometheus/client_model/go"

// family is one Prometheus metric family of the metric contract: its name,
// its type, and the exact label set of every one of its samples.
type family struct {
	name   string
	typ    dto.MetricType
	labels []string
}

const (
	gauge   = dto.MetricType_GAUGE
	counter = dto.MetricType_COUNTER
)

// contract is the metric table of docs/metrics.md, every row not marked
// (new): the Prometheus series that config/local.yaml must produce, as the
// legacy ernic-exporter did. ernic_qp_wqes_by_opcode_total
// is off by default; the e2e config enables it.
var contract = []family{
	// Cluster
	{"ernic_instances", gauge, nil},
	{"ernic_vms", gauge, nil},

	// Instance and VM (from the manifest and /proc)
	{"ernic_instance_up", gauge, []string{"ernic_id", "role", "mac"}},
	{"ernic_instance_uptime_seconds", gauge, []string{"ernic_id", "role"}},
	{"ernic_vm_attached", gauge, []string{"ernic_id", "role", "vm_name"}},
	{"ernic_vm_uptime_seconds", gauge, []string{"ernic_id", "role"}},
	{"ernic_vm_gpu_passthrough", gauge, []string{"ernic_id", "role"}},

	// Device (from <id>.stats)
	{"ernic_connection_up", gauge, []string{"ernic_id", "role", "state"}},
	{"ernic_qp_count", gauge, []string{"ernic_id", "role"}},
	{"ernic_ip_bytes_tx_total", counter, []string{"ernic_id", "role"}},
	{"ernic_ip_bytes_rx_total", counter, []string{"ernic_id", "role"}},
	{"ernic_rdma_bytes_sent_total", counter, []string{"ernic_id", "role"}},
	{"ernic_rdma_bytes_received_total", counter, []string{"ernic_id", "role"}},
	{"ernic_rdma_bytes_read_total", counter, []string{"ernic_id", "role"}},
	{"ernic_rdma_bytes_write_total", counter, []string{"ernic_id", "role"}},
	{"ernic_rdma_bytes_total", counter, []string{"ernic_id", "role"}},
	{"ernic_ip_bytes_total", counter, []string{"ernic_id", "role"}},
	{"ernic_flr_reset_total", counter, []string{"ernic_id", "role"}},
	{"ernic_commands_total", counter, []string{"ernic_id", "role"}},
	{"ernic_interrupts_total", counter, []string{"ernic_id", "role"}},
	{"ernic_mmio_reads_total", counter, []string{"ernic_id", "role"}},
	{"ernic_mmio_writes_total", counter, []string{"ernic_id", "role"}},
	{"ernic_stats_writes_total", counter, []string{"ernic_id", "role"}},
	{"ernic_lif_counter_total", counter, []string{"ernic_id", "role", "counter"}},

	// Per QP
	{"ernic_qp_bytes_sent_total", counter, []string{"ernic_id", "role", "qp"}},
	{"ernic_qp_bytes_received_total", counter, []string{"ernic_id", "role", "qp"}},
	{"ernic_qp_bytes_rdma_read_total", counter, []string{"ernic_id", "role", "qp"}},
	{"ernic_qp_bytes_rdma_write_total", counter, []string{"ernic_id", "role", "qp"}},
	{"ernic_qp_wqes_processed_total", counter, []string{"ernic_id", "role", "qp"}},
	{"ernic_qp_cqes_posted_total", counter, []string{"ernic_id", "role", "qp"}},
	{"ernic_qp_doorbell_send_total", counter, []string{"ernic_id", "role", "qp"}},
	{"ernic_qp_doorbell_recv_total", counter, []string{"ernic_id", "role", "qp"}},

	// Beyond the legacy exporter
	{"ernic_qp_wqes_by_opcode_total", counter, []string{"ernic_id", "role", "qp", "opcode"}},
	{"ernic_stats_age_seconds", gauge, []string{"ernic_id", "role"}},
}

// beyondContract lists the receiver's families that docs/metrics.md marks
// (new). They are checked like the contract's; any other ernic_* family
// fails the test, so a new metric cannot ship without a row here (and one
// in docs/metrics.md).
var beyondContract = []family{
	// ernic.qp.unpublished: QP blocks over max_qps_per_instance.
	{"ernic_qp_unpublished", gauge, []string{"ernic_id", "role"}},
	// ernic.instances.unpublished: instances over max_instances.
	{"ernic_instances_unpublished", gauge, nil},
	// ernic.labels.truncated: attribute values cut to max_label_length.
	{"ernic_labels_truncated", gauge, []string{"ernic_id", "role"}},
	// ernic.run_dir.readable: whether the run directory and its manifest
	// could be read, also when nothing else is published.
	{"ernic_run_dir_readable", gauge, nil},
}

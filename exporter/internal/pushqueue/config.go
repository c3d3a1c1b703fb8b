// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
)

// ValidateQueue checks merge_window and sending_queue; prepared explains the batcher's error.
func ValidateQueue(mergeWindow time.Duration, q configoptional.Optional[exporterhelper.QueueBatchConfig], prepared string) []error {
	var errs []error
	if mergeWindow < 0 {
		errs = append(errs, fmt.Errorf("merge_window %s: must not be negative", mergeWindow))
	}
	if mergeWindow > 0 && !q.HasValue() {
		errs = append(errs, errors.New("merge_window: needs the sending queue (sending_queue::enabled: true); without it a merged request is sent on the pipeline's behalf and its failure is not returned"))
	}
	if q.HasValue() && !q.Get().BlockOnOverflow {
		errs = append(errs, errors.New("sending_queue::block_on_overflow: false is not supported by this exporter; a full queue drops its oldest batch while sending fails and waits while it works, never refusing the newest (remove the setting)"))
	}
	if q.HasValue() && q.Get().Batch.HasValue() {
		errs = append(errs, fmt.Errorf("sending_queue::batch: not supported by this exporter; %s (merge_window joins batches)", prepared))
	}
	return errs
}

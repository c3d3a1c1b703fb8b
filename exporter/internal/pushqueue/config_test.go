// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushqueue

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
)

func TestValidateQueue(t *testing.T) {
	queue := exporterhelper.NewDefaultQueueConfig()
	queue.Batch = configoptional.None[exporterhelper.BatchConfig]()
	queue.BlockOnOverflow = true
	batched := queue
	batched.Batch = configoptional.Some(exporterhelper.BatchConfig{})
	refusing := queue
	refusing.BlockOnOverflow = false
	for name, c := range map[string]struct {
		window time.Duration
		queue  configoptional.Optional[exporterhelper.QueueBatchConfig]
		want   []string
	}{
		"queue, no window":       {queue: configoptional.Some(queue)},
		"queue and window":       {window: time.Second, queue: configoptional.Some(queue)},
		"no queue, no window":    {queue: configoptional.None[exporterhelper.QueueBatchConfig]()},
		"negative window":        {window: -time.Second, queue: configoptional.Some(queue), want: []string{"merge_window -1s: must not be negative"}},
		"window without a queue": {window: time.Second, queue: configoptional.None[exporterhelper.QueueBatchConfig](), want: []string{"merge_window: needs the sending queue"}},
		"queue's batcher":        {queue: configoptional.Some(batched), want: []string{"sending_queue::batch: not supported by this exporter; made so (merge_window joins batches)"}},
		"refusing the newest":    {queue: configoptional.Some(refusing), want: []string{"sending_queue::block_on_overflow: false is not supported"}},
	} {
		errs := ValidateQueue(c.window, c.queue, "made so")
		require.Len(t, errs, len(c.want), name)
		for i, w := range c.want {
			assert.ErrorContains(t, errs[i], w, name)
		}
		if len(c.want) == 0 {
			assert.NoError(t, errors.Join(errs...), name)
		}
	}
}

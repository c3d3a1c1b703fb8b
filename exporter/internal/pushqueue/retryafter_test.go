// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushqueue

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/consumer/consumererror"
)

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2015, 10, 21, 7, 27, 30, 0, time.UTC)
	for v, c := range map[string]struct {
		want time.Duration
		note string
	}{
		"":                              {},
		"7":                             {want: 7 * time.Second},
		" 120 ":                         {want: 2 * time.Minute},
		"0":                             {},
		"86400":                         {want: MaxRetryAfter, note: `Retry-After "86400" is beyond the cap; waits 5m0s`},
		"99999999999999999999":          {want: MaxRetryAfter, note: `Retry-After "99999999999999999999" is beyond the cap; waits 5m0s`},
		"-3":                            {note: `Retry-After "-3" is neither seconds nor an HTTP date; the backoff applies`},
		"soon":                          {note: `Retry-After "soon" is neither seconds nor an HTTP date; the backoff applies`},
		"Wed, 21 Oct 2015 07:28:00 GMT": {want: 30 * time.Second},
		"Wed, 21 Oct 2015 07:00:00 GMT": {note: `Retry-After "Wed, 21 Oct 2015 07:00:00 GMT" is past; the backoff applies`},
		"Thu, 22 Oct 2015 07:28:00 GMT": {want: MaxRetryAfter, note: `Retry-After "Thu, 22 Oct 2015 07:28:00 GMT" is beyond the cap; waits 5m0s`},
	} {
		err := RetryAfterHeader(errors.New("429"), v, now)
		assert.Equal(t, c.want, RetryAfter(err), "%q", v)
		assert.Equal(t, c.note, retryAfterNote(err), "%q", v)
		assert.Equal(t, "429", err.Error())
	}
}

// gRPC's RetryInfo has the same cap.
func TestNewRetryAfterIsCapped(t *testing.T) {
	err := NewRetryAfter(errors.New("ResourceExhausted"), 2*time.Hour)
	assert.Equal(t, MaxRetryAfter, RetryAfter(err))
	assert.Equal(t, "asked for 2h0m0s, waits 5m0s (the cap)", retryAfterNote(err))
	assert.Equal(t, 3*time.Second, RetryAfter(consumererror.NewPermanent(NewRetryAfter(errors.New("x"), 3*time.Second))))
	assert.Zero(t, RetryAfter(errors.New("plain")))
}

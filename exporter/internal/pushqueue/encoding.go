// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package pushqueue // import "github.com/rocm-ernic/otelcol-ernic/exporter/internal/pushqueue"

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
)

// Encoding stores a backend's requests in a persistent queue.
type Encoding[R Request] interface {
	Marshal(r R) ([]byte, error)
	Unmarshal(b []byte) (R, error)
}

// queueEncoding is what exporterhelper's queue gets: the backend's
// encoding, with a batch that cannot be read counted and logged.
type queueEncoding[R Request] struct {
	enc Encoding[R]
	// unreadable: a stored batch that does not decode; exporterhelper drops it.
	unreadable func(error)
}

func (e queueEncoding[R]) Marshal(_ context.Context, req xexporterhelper.Request) ([]byte, error) {
	r, ok := req.(R)
	if !ok {
		var want R
		return nil, &typeError{got: req, want: want}
	}
	return e.enc.Marshal(r)
}

// errHole is an index done before a restart put the read index back (backlog.go, rewound).
var errHole = errors.New("no batch at this index: sent before the restart")

func (e queueEncoding[R]) Unmarshal(b []byte) (context.Context, xexporterhelper.Request, error) {
	if len(b) == 0 {
		return nil, nil, errHole
	}
	r, err := e.enc.Unmarshal(b)
	if err != nil {
		e.unreadable(err)
		return nil, nil, err
	}
	return context.Background(), r, nil
}

type typeError struct{ got, want any }

func (e *typeError) Error() string {
	return fmt.Sprintf("a queue item is a %T, not a %T", e.got, e.want)
}

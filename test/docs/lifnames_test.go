// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
)

// The receiver's parser and the simulator list the 74 LIF counters in the
// same (struct) order. The receiver's list is in an internal package of
// its own module, which the root module cannot import: it is read from the
// source.
func TestLIFNamesSameAsParser(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "../../receiver/ernicreceiver/internal/rundir/names.go", nil, 0)
	require.NoError(t, err)
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "LIFCounterNames" {
			return true
		}
		for _, e := range vs.Values[0].(*ast.CompositeLit).Elts {
			s, err := strconv.Unquote(e.(*ast.BasicLit).Value)
			require.NoError(t, err)
			names = append(names, s)
		}
		return false
	})
	require.Len(t, names, 74, "rundir.LIFCounterNames")
	require.Equal(t, sim.LIFNames[:], names)
}

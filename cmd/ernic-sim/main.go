// Copyright The otelcol-ernic Authors
// SPDX-License-Identifier: Apache-2.0

// Command ernic-sim simulates a rocm-ernic run directory for developing and
// testing the ernic receiver without the real emulated NIC (internal/sim,
// receiver/ernicreceiver/internal/rundir/README.md). Each instance has a
// live "server" process, ernic-sim re-executed as "ernic-sim hold", so that
// the manifest's pids are real. Instance 1 is the manager; the others are
// workers whose stats are rewritten in place every -interval.
//
// Usage:
//
//	ernic-sim -run-dir /tmp/ernic [-instances 3] [-qps 8] [-interval 1s] [-lif=true] [-seed 1]
//	          [-chaos [-chaos-log FILE] [-chaos-every 3s] [-max-file-bytes N] [-huge-qps 10000]]
//
// -chaos injects every fault a reader of the run directory can meet
// (internal/sim/README.md) and prints one line per fault and real restart;
// -chaos-log writes them and every complete stats write as JSON lines.
// -run-dir defaults to $ERNIC_RUN_DIR. On SIGINT or SIGTERM it does the
// shutdown write, kills its children and exits, leaving the run directory.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
)

func main() {
	sim.HoldIfChild()
	os.Exit(run())
}

func run() int {
	fs := flag.NewFlagSet("ernic-sim", flag.ContinueOnError)
	runDir := fs.String("run-dir", os.Getenv("ERNIC_RUN_DIR"), "run directory to write (default $ERNIC_RUN_DIR)")
	instances := fs.Int("instances", 3, "server instances: id 1 manager, 2..N workers with a VM")
	qps := fs.Int("qps", 8, "QPs per attached instance (0 for none)")
	interval := fs.Duration("interval", time.Second, "time between two stats writes")
	lif := fs.Bool("lif", true, `print the "LIF Statistics:" block`)
	seed := fs.Int64("seed", 1, "seed of the simulated counters")
	writes := fs.Int("writes", 0, "stop rewriting the files after this many writes (0: never): a static run directory")
	chaos := fs.Bool("chaos", false, "inject faults (internal/sim/chaos*.go)")
	chaosLog := fs.String("chaos-log", "", "with -chaos: write faults, restarts and every complete write as JSON lines to this file")
	chaosEvery := fs.Duration("chaos-every", 3*time.Second, "with -chaos: time between two faults (torn writes come every second besides)")
	maxFileBytes := fs.Int64("max-file-bytes", 64<<20, "with -chaos: the collector's max_file_bytes, exceeded by the oversized file")
	hugeQPs := fs.Int("huge-qps", 10000, "with -chaos: QPs of the instance it adds (negative: none)")
	maxInstances := fs.Int("max-instances", 0, "with -chaos: the collector's max_instances; faults go only to the instances it publishes (0: all)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "ernic-sim: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *runDir == "" {
		fmt.Fprintln(os.Stderr, "ernic-sim: -run-dir is required (or set ERNIC_RUN_DIR)")
		return 2
	}
	if *qps == 0 {
		*qps = -1 // sim.Options: 0 means the default, negative means none
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o := sim.Options{
		RunDir:    *runDir,
		Instances: *instances,
		QPs:       *qps,
		Interval:  *interval,
		LIF:       *lif,
		Seed:      *seed,
		Writes:    *writes,
	}
	simCtx := ctx
	if *chaos {
		o.Log = faultLines{os.Stdout}
		simCtx = context.Background() // stopped after the chaos, below
	}
	s, err := sim.New(o)
	var c *sim.Chaos
	if err == nil && *chaos {
		co := sim.ChaosOptions{Every: *chaosEvery, MaxFileBytes: *maxFileBytes, HugeQPs: *hugeQPs, Seed: *seed, MaxInstances: *maxInstances}
		if *chaosLog != "" {
			f, ferr := os.OpenFile(*chaosLog, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
			if ferr != nil {
				fmt.Fprintf(os.Stderr, "ernic-sim: %v\n", ferr)
				return 1
			}
			defer f.Close()
			co.Events = f
		}
		c, err = sim.NewChaos(s, co)
		if err == nil {
			defer c.Stop()
		}
	}
	if err == nil {
		err = s.Start(simCtx)
	}
	if err == nil && c != nil {
		err = c.Start(ctx)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ernic-sim: %v\n", err)
		return 1
	}
	var pids []string
	for _, in := range s.Instances() {
		pids = append(pids, fmt.Sprintf("%d=%d", in.ID, in.PID))
	}
	fmt.Printf("ernic-sim: run dir %s, simulator pid %d, instance pids %s\n",
		*runDir, os.Getpid(), strings.Join(pids, " "))
	<-ctx.Done()
	if c != nil {
		_ = c.Stop()
	}
	if err := s.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "ernic-sim: %v\n", err)
		return 1
	}
	return 0
}

// faultLines passes on the simulator's log lines about faults, restarts and
// errors, not the one per stats write.
type faultLines struct{ w io.Writer }

func (f faultLines) Write(p []byte) (int, error) {
	for _, line := range strings.SplitAfter(string(p), "\n") {
		if strings.HasPrefix(line, "fault ") || strings.HasPrefix(line, "restart ") || strings.HasPrefix(line, "error ") {
			if _, err := io.WriteString(f.w, line); err != nil {
				return 0, err
			}
		}
	}
	return len(p), nil
}

// Command ernic-sim simulates a rocm-ernic run directory for developing and
// testing the ernic receiver without the real emulated NIC: it keeps
// instances.json and one <id>.stats file per server instance up to date in
// the exact format of the rocm-ernic server and launcher (see
// internal/sim and /work/shared/spec/run-dir-format.md).
//
// Every instance gets its own live "server" process: ernic-sim re-executes
// itself as "ernic-sim hold", a child that only blocks until its stdin closes
// or a signal arrives, so the manifest pids are real. Instance 1 is the
// manager (no VM, stats written only at startup and shutdown); instances
// 2..N are workers with an attached VM whose stats are rewritten in place
// every -interval; about every 60 s one worker gets a device reset.
//
// Usage:
//
//	ernic-sim -run-dir /tmp/ernic [-instances 3] [-qps 8] [-interval 1s] [-lif=true] [-seed 1]
//
// -run-dir defaults to $ERNIC_RUN_DIR. It runs until SIGINT or SIGTERM, then
// writes every stats file once more (shutdown write), kills its children and
// exits, leaving the run directory in place.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rocm-ernic/otelcol-ernic/internal/sim"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == sim.HoldArg {
		sim.Hold()
		return
	}
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
	s, err := sim.New(sim.Options{
		RunDir:    *runDir,
		Instances: *instances,
		QPs:       *qps,
		Interval:  *interval,
		LIF:       *lif,
		Seed:      *seed,
	})
	if err == nil {
		err = s.Start(ctx)
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
	if err := s.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "ernic-sim: %v\n", err)
		return 1
	}
	return 0
}

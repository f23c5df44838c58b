// Command schedsim replays a workload through pbs_sched's real policy
// code in simulated time on simulated nodes (no daemons) under three
// policies side by side — TORQUE's FIFO, FIFO with help_starving_jobs,
// and look-ahead scheduling with reservations and backfilling — and
// prints utilisation, mean and 95th-percentile wait, mean bounded
// slowdown and the longest and the largest job's waits; -svg draws the
// node-time chart of each policy.
//
//	schedsim -synthetic 10000 -nodes 128 -np 8 -svg chart
//	schedsim -swf site-2025.swf -nodes 64 -np 16
//
// An SWF file with a broken line stops schedsim with the line's number.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"gopbs/sched/schedsim"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("schedsim", flag.ContinueOnError)
	swf := fs.String("swf", "", "workload in the Standard Workload Format (processors are slots)")
	synthetic := fs.Int("synthetic", 0, "generate a synthetic workload of this many jobs instead")
	seed := fs.Int64("seed", 1, "synthetic workload: random seed")
	load := fs.Float64("load", 0.9, "synthetic workload: offered load")
	save := fs.String("save-swf", "", "write the workload (e.g. the synthetic one) to this SWF file")
	nodes := fs.Int("nodes", 128, "cluster nodes")
	np := fs.Int("np", 8, "slots per node")
	maxRes := fs.Int("max-reservation", 20, "max_reservation of the reservation policy (-1: no cap)")
	reserveLarger := fs.Int("reserve-larger", 0, "only jobs of at least this many slots ask for a reservation (0: all)")
	maxStarve := fs.Duration("max-starve", 24*time.Hour, "max_starve of the FIFO+starving policy")
	offset := fs.Duration("duration-offset", time.Minute, "duration_offset")
	svg := fs.String("svg", "", "write the node-time chart of each policy to <prefix>-<policy>.svg")
	window := fs.Duration("svg-window", 7*24*time.Hour, "chart this much of the run from its start (0: all)")
	check := fs.Bool("check", true, "verify that no reservation is ever delayed (reservation policy)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var w schedsim.Workload
	switch {
	case *swf != "" && *synthetic > 0:
		fmt.Fprintln(os.Stderr, "schedsim: -swf and -synthetic exclude each other")
		return 2
	case *swf != "":
		f, err := os.Open(*swf)
		if err != nil {
			fmt.Fprintln(os.Stderr, "schedsim:", err)
			return 1
		}
		var skipped int
		w, skipped, err = schedsim.ReadSWF(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "schedsim: %s: %v\n", *swf, err)
			return 1
		}
		if skipped > 0 {
			fmt.Printf("%s: %d jobs without run time or processors skipped\n", *swf, skipped)
		}
	case *synthetic > 0:
		w = schedsim.Synthetic{Jobs: *synthetic, Slots: *nodes * *np, Load: *load, Seed: *seed}.Generate()
	default:
		fmt.Fprintln(os.Stderr, "schedsim: give -swf FILE or -synthetic N")
		return 2
	}
	if *save != "" {
		f, err := os.Create(*save)
		if err == nil {
			err = schedsim.WriteSWF(f, w, fmt.Sprintf("schedsim workload: %d jobs, seed %d, load %.2f", len(w), *seed, *load))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "schedsim:", err)
			return 1
		}
	}
	fmt.Printf("%d jobs on %d nodes x %d slots\n", len(w), *nodes, *np)
	var results []*schedsim.Result
	for _, mode := range []schedsim.Mode{schedsim.FIFO, schedsim.FIFOStarving, schedsim.Reservation} {
		start := time.Now()
		r, err := schedsim.Run(w, schedsim.Options{Nodes: *nodes, NP: *np, Mode: mode, MaxReservation: *maxRes,
			MaxStarve: *maxStarve, Offset: *offset, ReserveLarger: *reserveLarger, Check: *check})
		if err != nil {
			fmt.Fprintln(os.Stderr, "schedsim:", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "%s: %d cycles in %s\n", mode, r.Cycles, time.Since(start).Round(time.Millisecond))
		if len(r.Violations) > 0 {
			fmt.Fprintf(os.Stderr, "schedsim: %s: %d reservations delayed, first: %s\n", mode, len(r.Violations), r.Violations[0])
			return 1
		}
		results = append(results, r)
		if *svg != "" {
			name := fmt.Sprintf("%s-%s.svg", *svg, map[schedsim.Mode]string{schedsim.FIFO: "fifo", schedsim.FIFOStarving: "starving", schedsim.Reservation: "reservation"}[mode])
			f, err := os.Create(name)
			if err == nil {
				first := int64(0)
				if len(w) > 0 {
					first = w[0].Submit
				}
				to := int64(0)
				if *window > 0 {
					to = first + int64(*window/time.Second)
				}
				err = schedsim.WriteSVG(f, r, first, to)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "schedsim:", err)
				return 1
			}
		}
	}
	schedsim.WriteTable(os.Stdout, results)
	return 0
}

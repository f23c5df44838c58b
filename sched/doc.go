// Package sched is the home of the GoPBS scheduler, a reimplementation of
// TORQUE 2.5.13's pbs_sched with its FIFO policy (spec 14), and with the
// NAS scheduler's policy of OpenPBS 2.3 (seed 000) as a second policy.
// Both implement policy.Policy; the daemon runs the one the configuration
// file's form (or -policy) selects. It holds no code itself; the work is
// split into small packages, one job each:
//
//   - config: sched_priv/sched_config (every key, prime/non-prime values,
//     TORQUE's quirks) and the shipped sample, plus two keys of later PBS
//     schedulers that TORQUE 2.5.13 rejects (spec 14 §5.2): resources
//     (the resources checked against what is available) and
//     smp_cluster_dist (pack, round_robin or lowest_load placement of
//     jobs that request no nodes).
//   - timeplan: the holidays file (prime time) and dedicated_time.
//   - fairshare: the resource_group tree, usage accounting, decay and the
//     usage file.
//   - world: the snapshot of server, queues, jobs and nodes one cycle
//     works on, built from status replies.
//   - placement: node specifications and a model of the nodes' virtual
//     processors (what fits now, later, never).
//   - policy: the scheduling cycle as a pipeline — select candidates,
//     order them (sort keys, by_queue, round_robin, fair share, the
//     starving job), run each job through the stages (run limits,
//     dedicated time, starvation, node placement, resources, tokens) and
//     run it — acting through the Actions interface; with max_reservation
//     it also reserves and backfills against the profile; Simulator carries
//     the actions out in memory. Unlike TORQUE, by default a job that
//     the node model says cannot fit now costs no request once the
//     server has agreed for its node specification (one probe per
//     specification and cycle; Scheduler.NoPrefilter, pbs_sched
//     -prefilter-nodes=false, restores TORQUE's sequence).
//   - nas: the NAS policy — submit queue to batch queues (MoveJob, then
//     RunJob), special, external and dedicated queues, prime time,
//     dedicated time from a command, run limits and load, waiting jobs,
//     past usage and allocations, fragmentation avoidance, lazy comments,
//     TEST_ONLY; nas/config: its configuration language and sanity checks
//     (docs/nas-scheduler.md documents every option).
//   - profile: the resource-time profile of look-ahead scheduling (seed
//     004): node slots and consumables, server consumables and queue
//     limits over time; earliest start, fit, bookings and the MONITOR
//     file. The policy's reservations and backfilling use it, and
//     advance reservations are to.
//   - schedsim: replays a workload (SWF or synthetic) through the policy
//     in simulated time and measures it (tools/schedsim).
//   - schedlog: sched_logs in TORQUE's line format.
//   - svrconn: the batch requests the scheduler sends back over the
//     connection the server opened, byte for byte as TORQUE's.
//   - momquery: the RM queries to MOMs (RPP, or TCP).
//   - daemon: accepting the server's connections, trust checks, commands,
//     reading the world, choosing the policy and running cycles.
//   - cmd/pbs_sched: the command.
package sched

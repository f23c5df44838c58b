// This file reads the policy files of sched_priv (LoadPolicy) and saves the
// fair-share usage back to them.

package daemon

import (
	"errors"
	"fmt"
	"os"
	"time"

	"gopbs/internal/logline"
	"gopbs/sched/config"
	"gopbs/sched/fairshare"
	"gopbs/sched/policy"
	"gopbs/sched/reservable"
	"gopbs/sched/timeplan"
)

// LoadPolicy (re)reads the policy files: reservable.ad (a malformed one
// is an error naming its line), then for the NAS policy its
// configuration (see nasConfigPath); for the FIFO policy sched_config,
// holidays, dedicated_time, resource_group and the usage file, saving
// the current usage first.
func (d *Daemon) LoadPolicy() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.loadPolicyLocked()
}

// loadPolicyLocked is LoadPolicy with d.mu held.
func (d *Daemon) loadPolicyLocked() error {
	rp, err := reservable.Load(d.PrivPath(reservable.FileName))
	if err != nil {
		return err
	}
	d.Reservable = rp
	path, err := d.nasConfigPath()
	if err != nil {
		return err
	}
	if path != "" {
		return d.loadNAS(path)
	}
	if d.Sched != nil && d.Sched.FairShare != nil {
		d.saveUsage()
	}
	cfg := &config.Config{}
	c, lineErrs, err := config.ReadFile(d.PrivPath("sched_config"))
	switch {
	case err == nil:
		cfg = c
	case errors.Is(err, os.ErrNotExist):
	default:
		return err
	}
	for _, e := range lineErrs {
		fmt.Fprintln(d.opts.Stderr, e.Error())
	}
	hol, err := timeplan.ReadHolidays(d.PrivPath("holidays"))
	if err != nil {
		return err
	}
	ded, err := timeplan.ReadDedicated(d.PrivPath("dedicated_time"), time.Local)
	if err != nil {
		return err
	}
	tree, err := fairshare.ReadFile(d.PrivPath("resource_group"), cfg.UnknownShares)
	if err != nil {
		return err
	}
	if err := tree.LoadUsageFile(d.PrivPath("usage")); err != nil {
		return err
	}
	s := policy.New(cfg, d.Log)
	s.Holidays, s.Dedicated, s.FairShare = hol, ded, tree
	s.NoPrefilter = d.opts.NoPrefilter
	s.MonitorPath = d.PrivPath("schedule")
	if d.Sched != nil {
		s.Location = d.Sched.Location
	}
	d.Sched, d.running, d.nas = s, s, nil
	d.Log.SetFilter(cfg.LogFilter)
	return nil
}

func (d *Daemon) saveUsage() {
	if err := d.Sched.FairShare.SaveUsageFile(d.PrivPath("usage")); err != nil {
		d.Log.Log(logline.EventError, logline.ClassServer, "usage", err.Error())
	}
	d.lastSync = d.Now()
}

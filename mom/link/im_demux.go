package link

// The mother superior's demultiplexer of the output of the job's tasks on
// other hosts (pbsdsh -o and TM spawns): a demux per job.

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"
)

// demux receives the output of the job's tasks on other hosts: one TCP
// port for stdout, one for stderr; each connection's bytes are appended
// to the job's file (TORQUE's pbs_demux).
type demux struct {
	jobID                  string
	out, err               net.Listener
	stdoutPort, stderrPort int
	wg                     sync.WaitGroup
}

// startDemux listens on two ephemeral ports of every address.
func (m *Mom) startDemux(jobID string, tr TaskRunner) (*demux, error) {
	out, err := net.Listen("tcp", ":0")
	if err != nil {
		return nil, err
	}
	errl, err := net.Listen("tcp", ":0")
	if err != nil {
		out.Close()
		return nil, err
	}
	return m.serveDemux(jobID, tr, out, errl), nil
}

// serveDemux runs the demultiplexer on two listeners.
func (m *Mom) serveDemux(jobID string, tr TaskRunner, out, errl net.Listener) *demux {
	d := &demux{jobID: jobID, out: out, err: errl}
	d.stdoutPort = d.out.Addr().(*net.TCPAddr).Port
	d.stderrPort = d.err.Addr().(*net.TCPAddr).Port
	for i, ln := range []net.Listener{d.out, d.err} {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			m.demuxAccept(d, ln, tr, i == 1)
		}()
	}
	return d
}

func (m *Mom) demuxAccept(d *demux, ln net.Listener, tr TaskRunner, stderr bool) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		peer, _ := netip.ParseAddrPort(c.RemoteAddr().String())
		if !m.Trusted(peer.Addr()) && !peer.Addr().IsLoopback() {
			m.log.Error(0, "", "demux", fmt.Sprintf("job %s: output connection from untrusted %v", d.jobID, peer))
			c.Close()
			continue
		}
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			defer c.Close()
			m.demuxCopy(d, c, tr, stderr)
		}()
	}
}

// demuxCopy appends what one connection sends to the job's file. The
// file is opened when the first bytes arrive.
func (m *Mom) demuxCopy(d *demux, c net.Conn, tr TaskRunner, stderr bool) {
	buf := make([]byte, 32*1024)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			f, ferr := tr.AppendOutput(d.jobID, stderr)
			if ferr != nil {
				m.logErr("demux", ferr, d.jobID)
				return
			}
			_, werr := f.Write(buf[:n])
			f.Close()
			if werr != nil {
				m.logErr("demux", werr, d.jobID)
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// close stops accepting and waits (briefly) for the open connections to
// drain: the tasks that write to them are gone by now.
func (d *demux) close() {
	d.out.Close()
	d.err.Close()
	done := make(chan struct{})
	go func() {
		d.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
}

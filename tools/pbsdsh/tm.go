package main

import (
	"errors"
	"fmt"
	"net"
	"sync"

	"gopbs/dis"
	"gopbs/momproto"
)

// tmClient is the task side of the TM protocol (spec 10 §11.2): requests
// go to the local MOM over one TCP connection; replies may come in any
// order and are matched to their requests by event number.
type tmClient struct {
	c      net.Conn
	jobID  string
	cookie string
	task   uint32 // this task's id (PBS_TASKNUM)

	mu      sync.Mutex
	event   int
	pending map[int]chan *momproto.TMReply
	cmds    map[int]int // event → command of pending requests, for decoding
	err     error       // set when the connection broke
}

// errTM is a TM_ERROR reply.
type errTM struct{ code int }

func (e *errTM) Error() string { return fmt.Sprintf("TM error %d", e.code) }

func dialTM(addr, jobID, cookie string, task uint32) (*tmClient, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	tc := &tmClient{c: c, jobID: jobID, cookie: cookie, task: task, pending: map[int]chan *momproto.TMReply{}, cmds: map[int]int{}}
	go tc.readLoop()
	return tc, nil
}

func (tc *tmClient) close() { tc.c.Close() }

// readLoop decodes replies and hands each to the request with its event.
func (tc *tmClient) readLoop() {
	var buf []byte
	tmp := make([]byte, 4096)
	fail := func(err error) {
		tc.mu.Lock()
		tc.err = err
		for ev, ch := range tc.pending {
			close(ch)
			delete(tc.pending, ev)
		}
		tc.mu.Unlock()
	}
	for {
		n, err := tc.c.Read(tmp)
		buf = append(buf, tmp[:n]...)
		for len(buf) > 0 {
			rep, used, derr := momproto.DecodeTMReply(buf, tc.commandOf)
			if derr != nil {
				if errors.Is(derr, dis.ErrEOF) || errors.Is(derr, dis.ErrEOD) {
					break // incomplete: read more
				}
				fail(fmt.Errorf("bad reply from MOM: %w", derr))
				return
			}
			buf = buf[used:]
			tc.mu.Lock()
			ch := tc.pending[rep.Event]
			delete(tc.pending, rep.Event)
			delete(tc.cmds, rep.Event)
			tc.mu.Unlock()
			if ch != nil {
				ch <- rep
			}
		}
		if err != nil {
			fail(fmt.Errorf("connection to MOM: %w", err))
			return
		}
	}
}

// commandOf returns the command of the pending request with event.
func (tc *tmClient) commandOf(event int) int {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if cmd, ok := tc.cmds[event]; ok {
		return cmd
	}
	return -1
}

// send sends a request and returns the channel its reply arrives on.
func (tc *tmClient) send(cmd int, body momproto.Body) (int, <-chan *momproto.TMReply, error) {
	tc.mu.Lock()
	if tc.err != nil {
		tc.mu.Unlock()
		return 0, nil, tc.err
	}
	tc.event++
	ev := tc.event
	ch := make(chan *momproto.TMReply, 1)
	tc.pending[ev] = ch
	tc.cmds[ev] = cmd
	tc.mu.Unlock()
	req := &momproto.TMRequest{Version: momproto.TM_PROTOCOL_VER, JobID: tc.jobID, Cookie: tc.cookie,
		Command: cmd, Event: ev, FromTask: tc.task, Body: body}
	if _, err := tc.c.Write(req.Append(nil)); err != nil {
		return 0, nil, err
	}
	return ev, ch, nil
}

// wait returns the reply on ch as a body or an error.
func (tc *tmClient) wait(ch <-chan *momproto.TMReply) (momproto.Body, error) {
	rep, ok := <-ch
	if !ok {
		tc.mu.Lock()
		err := tc.err
		tc.mu.Unlock()
		if err == nil {
			err = errors.New("connection to MOM closed")
		}
		return nil, err
	}
	if rep.Code == momproto.TM_ERROR {
		code := 0
		if b, ok := rep.Body.(*momproto.Ints); ok && len(b.Values) > 0 {
			code = b.Values[0]
		}
		return nil, &errTM{code}
	}
	return rep.Body, nil
}

// call sends a request and waits for its reply.
func (tc *tmClient) call(cmd int, body momproto.Body) (momproto.Body, error) {
	_, ch, err := tc.send(cmd, body)
	if err != nil {
		return nil, err
	}
	return tc.wait(ch)
}

package server

import (
	"gopbs/server/admit"
	"gopbs/server/state"
)

// admitState is the server as admission (package admit) reads it, with
// s.mu held.
type admitState struct{ s *Server }

func (v admitState) Attrs() state.Attrs           { return v.s.attrs }
func (v admitState) Nodes() []*state.Node         { return v.s.nodes }
func (v admitState) Node(name string) *state.Node { return v.s.nodeByName[name] }

var _ admit.State = admitState{}

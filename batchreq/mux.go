package batchreq

// A Handler serves one decoded request. C is the connection type of the
// server using the mux (it carries whatever per-connection state the
// server keeps and the means to reply).
type Handler[C any] interface {
	ServeBatch(conn C, req *Request)
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc[C any] func(conn C, req *Request)

// ServeBatch calls f(conn, req).
func (f HandlerFunc[C]) ServeBatch(conn C, req *Request) { f(conn, req) }

// ServeMux dispatches requests to handlers by request type. Types with
// no handler go to NotFound (which the server typically sets to answer
// PBSE_UNKREQ). The zero value is ready to use. Register handlers before
// serving; ServeMux does no locking.
type ServeMux[C any] struct {
	handlers [PBS_BATCH_CEILING]Handler[C]
	goPBS    [PBS_BATCH_GoPBSCeiling - PBS_BATCH_GoPBSFirst]Handler[C]
	// NotFound serves requests of types without a handler; if nil such
	// requests are dropped.
	NotFound Handler[C]
}

// Handle registers h for request type reqType (TORQUE's or GoPBS's
// own), replacing any earlier handler. It panics if reqType is out of
// range, a programming error.
func (m *ServeMux[C]) Handle(reqType int, h Handler[C]) {
	if IsGoPBSRequest(reqType) {
		m.goPBS[reqType-PBS_BATCH_GoPBSFirst] = h
		return
	}
	if reqType < 0 || reqType >= PBS_BATCH_CEILING {
		panic("batchreq: Handle: request type out of range")
	}
	m.handlers[reqType] = h
}

// HandleFunc registers f for request type reqType.
func (m *ServeMux[C]) HandleFunc(reqType int, f func(conn C, req *Request)) {
	m.Handle(reqType, HandlerFunc[C](f))
}

// Handler returns the handler registered for reqType, or nil.
func (m *ServeMux[C]) Handler(reqType int) Handler[C] {
	if IsGoPBSRequest(reqType) {
		return m.goPBS[reqType-PBS_BATCH_GoPBSFirst]
	}
	if reqType < 0 || reqType >= PBS_BATCH_CEILING {
		return nil
	}
	return m.handlers[reqType]
}

// ServeBatch dispatches req to the handler of its type, or to NotFound.
func (m *ServeMux[C]) ServeBatch(conn C, req *Request) {
	if h := m.Handler(req.Type); h != nil {
		h.ServeBatch(conn, req)
		return
	}
	if m.NotFound != nil {
		m.NotFound.ServeBatch(conn, req)
	}
}

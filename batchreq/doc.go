// Package batchreq holds the TORQUE 2.5.13 batch protocol: the request
// header and extension, the body of every request type (0–62), every
// reply choice, the attribute-list encodings and all protocol constants
// (request types, reply choices, batch operations, object types, manager
// commands, scheduler commands and the PBSE_* error table).
//
// Reading a request on the server side:
//
//	r := dis.NewReader(conn)
//	req, err := batchreq.ReadServerRequest(r)
//	r.DiscardBuffered() // the original drops unread input (spec 01 §7.2)
//	switch {
//	case errors.Is(err, io.EOF):      // peer closed before a header: close silently
//	case err != nil:                  // reply batchreq.DecodeErrorReply(err), then close
//	}
//	switch body := req.Body.(type) {
//	case *batchreq.QueueJob: ...
//	}
//
// pbs_mom reads with ReadRequest, which also knows the server-to-MOM
// types (ReturnFiles, CopyFiles, DelFiles). Error replies are built with
// ErrorReply, BadAttrReply and SystemErrorReply from the PBSE table
// (ErrorText) and the Msg* texts.
//
// Sending a request and reading its reply on the client side:
//
//	req := &batchreq.Request{
//		Header: batchreq.Header{Type: batchreq.PBS_BATCH_StatusJob, User: "alice"},
//		Body:   &batchreq.StatusReq{},
//	}
//	w := dis.NewWriter(conn)
//	req.Encode(w)
//	err := w.Flush()
//	reply, err := batchreq.ReadReply(dis.NewReader(conn))
//
// Bodies are one Go struct per body kind (several request types share a
// kind: JobID serves RdytoCommit, Commit, LocateJob and Rerun; Manage
// serves DeleteJob, HoldJob, Manager, ModifyJob, ...); NewBody gives the
// kind of a type. Replies are a single Reply struct whose Choice selects
// which of its fields travel. Encoding is byte-exact: decoding a real
// message and encoding it again reproduces the original bytes, including
// the attribute-list size fields as received (Attr.Size).
//
// ServeMux dispatches decoded requests by type to Handlers, in the manner
// of net/http; it is generic in the connection type the server passes.
package batchreq

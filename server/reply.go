package server

import "gopbs/server/handler"

// replyWriter is how a request is answered by code that does not know the
// connection it came on: the transport's connections implement it.
type replyWriter = handler.ReplyWriter

package main

import (
	"fmt"
	"strconv"
	"strings"

	"gopbs/batchreq"
	"gopbs/momproto"
)

// maxNames is how many attribute names a line lists before "...".
const maxNames = 12

func itoa(v int) string { return strconv.Itoa(v) }

// attrNames lists the attribute names of a list ("Resource_List.walltime").
func attrNames(l batchreq.AttrList) string {
	var b strings.Builder
	for i := range l {
		if i == maxNames {
			fmt.Fprintf(&b, ",...(%d)", len(l))
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l[i].FullName())
	}
	return b.String()
}

// attrPairs lists name=value pairs, for short lists whose values matter
// (qmgr settings, job obituaries).
func attrPairs(l batchreq.AttrList) string {
	var b strings.Builder
	for i := range l {
		if i == maxNames {
			fmt.Fprintf(&b, ",...(%d)", len(l))
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l[i].FullName())
		if l[i].Value != "" {
			b.WriteByte('=')
			b.WriteString(l[i].Value)
		}
	}
	return b.String()
}

var objNames = map[int]string{
	batchreq.MGR_OBJ_NONE: "none", batchreq.MGR_OBJ_SERVER: "server", batchreq.MGR_OBJ_QUEUE: "queue",
	batchreq.MGR_OBJ_JOB: "job", batchreq.MGR_OBJ_NODE: "node", batchreq.MGR_OBJ_RESV: "resv",
}

var mgrNames = map[int]string{
	batchreq.MGR_CMD_CREATE: "create", batchreq.MGR_CMD_DELETE: "delete", batchreq.MGR_CMD_SET: "set",
	batchreq.MGR_CMD_UNSET: "unset", batchreq.MGR_CMD_LIST: "list", batchreq.MGR_CMD_PRINT: "print",
	batchreq.MGR_CMD_ACTIVE: "active",
}

func nameOr(names map[int]string, v int) string {
	if s, ok := names[v]; ok {
		return s
	}
	return itoa(v)
}

// requestFields returns the key fields of a batch request.
func requestFields(req *batchreq.Request) []Field {
	var f []Field
	switch b := req.Body.(type) {
	case *batchreq.QueueJob:
		f = append(f, Field{"job", b.JobID}, Field{"dest", b.Destination}, Field{"attrs", attrNames(b.Attrs)})
	case *batchreq.JobFile:
		f = append(f, Field{"job", b.JobID}, Field{"seq", itoa(b.Seq)}, Field{"filetype", itoa(b.FileType)},
			Field{"bytes", itoa(len(b.Data))})
	case *batchreq.JobID:
		f = append(f, Field{"job", b.ID})
	case *batchreq.Manage:
		f = append(f, Field{"cmd", nameOr(mgrNames, b.Command)}, Field{"obj", nameOr(objNames, b.ObjType)},
			Field{"name", b.ObjName}, Field{"attrs", attrPairs(b.Attrs)})
	case *batchreq.MessJob:
		f = append(f, Field{"job", b.JobID}, Field{"fileopt", itoa(b.FileOpt)}, Field{"text", b.Message})
	case *batchreq.MoveJob:
		f = append(f, Field{"job", b.JobID}, Field{"dest", b.Destination})
	case *batchreq.RunJob:
		f = append(f, Field{"job", b.JobID}, Field{"dest", b.Destination})
	case *batchreq.Select:
		f = append(f, Field{"attrs", attrPairs(b.Attrs)})
	case *batchreq.Shutdown:
		f = append(f, Field{"manner", itoa(b.Manner)})
	case *batchreq.SignalJob:
		f = append(f, Field{"job", b.JobID}, Field{"signal", b.Signal})
	case *batchreq.StatusReq:
		f = append(f, Field{"id", b.ID}, Field{"attrs", attrNames(b.Attrs)})
	case *batchreq.TrackJob:
		f = append(f, Field{"job", b.JobID}, Field{"location", b.Location})
	case *batchreq.Resc:
		f = append(f, Field{"queries", strings.Join(b.Queries, ",")})
	case *batchreq.AuthenUser:
		f = append(f, Field{"port", itoa(b.Port)})
	case *batchreq.AltAuthenUser:
		f = append(f, Field{"port", itoa(b.Port)})
	case *batchreq.RegistDep:
		f = append(f, Field{"owner", b.Owner}, Field{"parent", b.ParentID}, Field{"child", b.ChildID},
			Field{"deptype", batchreq.DependName(b.DepType)}, Field{"op", itoa(b.Op)})
	case *batchreq.ReturnFiles:
		f = append(f, Field{"job", b.JobID})
	case *batchreq.CopyFiles:
		f = append(f, Field{"job", b.JobID}, Field{"direction", itoa(b.Direction)}, Field{"pairs", itoa(len(b.Pairs))})
	case *batchreq.JobObit:
		f = append(f, Field{"job", b.JobID}, Field{"status", itoa(b.ExitStatus)}, Field{"attrs", attrPairs(b.Attrs)})
	case *batchreq.GpuCtrl:
		f = append(f, Field{"node", b.MomNode}, Field{"gpu", b.GpuID})
	case *batchreq.JobCred:
		f = append(f, Field{"credtype", itoa(b.CredType)}, Field{"bytes", itoa(len(b.Data))})
	case *batchreq.ResvSubmit:
		f = append(f, Field{"flags", itoa(b.Flags)}, Field{"attrs", attrPairs(b.Attrs)})
	case *batchreq.ResvID:
		f = append(f, Field{"resv", b.ID}, Field{"owner", b.Owner}, Field{"flags", itoa(b.Flags)})
	case *batchreq.ResvModify:
		f = append(f, Field{"resv", b.ID}, Field{"flags", itoa(b.Flags)}, Field{"attrs", attrPairs(b.Attrs)})
	case *batchreq.ResvStatus:
		f = append(f, Field{"resv", b.ID}, Field{"owner", b.Owner}, Field{"start", strconv.FormatInt(b.Start, 10)},
			Field{"end", strconv.FormatInt(b.End, 10)}, Field{"expired", itoa(b.Expired)})
	case *batchreq.ResvAvail:
		f = append(f, Field{"start", strconv.FormatInt(b.Start, 10)}, Field{"end", strconv.FormatInt(b.End, 10)},
			Field{"attrs", attrPairs(b.Attrs)})
	}
	if req.HasExtension {
		f = append(f, Field{"ext", req.Extension})
	}
	return f
}

var choiceNames = map[int]string{
	batchreq.BATCH_REPLY_CHOICE_NULL: "NULL", batchreq.BATCH_REPLY_CHOICE_Queue: "Queue",
	batchreq.BATCH_REPLY_CHOICE_RdytoCommit: "RdytoCommit", batchreq.BATCH_REPLY_CHOICE_Commit: "Commit",
	batchreq.BATCH_REPLY_CHOICE_Select: "Select", batchreq.BATCH_REPLY_CHOICE_Status: "Status",
	batchreq.BATCH_REPLY_CHOICE_Text: "Text", batchreq.BATCH_REPLY_CHOICE_Locate: "Locate",
	batchreq.BATCH_REPLY_CHOICE_RescQuery: "RescQuery",
}

// replyFields returns the key fields of a batch reply.
func replyFields(rep *batchreq.Reply) []Field {
	f := []Field{{"code", itoa(rep.Code)}}
	if rep.AuxCode != 0 {
		f = append(f, Field{"aux", itoa(rep.AuxCode)})
	}
	f = append(f, Field{"choice", nameOr(choiceNames, rep.Choice)})
	switch rep.Choice {
	case batchreq.BATCH_REPLY_CHOICE_Queue, batchreq.BATCH_REPLY_CHOICE_RdytoCommit, batchreq.BATCH_REPLY_CHOICE_Commit:
		f = append(f, Field{"job", rep.JobID})
	case batchreq.BATCH_REPLY_CHOICE_Select:
		f = append(f, Field{"jobs", strings.Join(rep.JobIDs, ",")})
	case batchreq.BATCH_REPLY_CHOICE_Status:
		names := make([]string, 0, len(rep.Status))
		for i, o := range rep.Status {
			if i == maxNames {
				names = append(names, fmt.Sprintf("...(%d)", len(rep.Status)))
				break
			}
			names = append(names, o.Name)
		}
		f = append(f, Field{"objects", strings.Join(names, ",")})
	case batchreq.BATCH_REPLY_CHOICE_Text:
		f = append(f, Field{"text", rep.Text})
	case batchreq.BATCH_REPLY_CHOICE_Locate:
		f = append(f, Field{"location", rep.Location})
	case batchreq.BATCH_REPLY_CHOICE_RescQuery:
		f = append(f, Field{"queries", itoa(len(rep.Resc.Avail))})
	}
	if rep.Code != 0 && rep.Choice != batchreq.BATCH_REPLY_CHOICE_Text {
		if t := batchreq.ErrorText(rep.Code); t != "" {
			f = append(f, Field{"error", t})
		}
	}
	return f
}

func isFields(m *momproto.ISMessage) []Field {
	f := []Field{{"IS", momproto.ISCommandName(m.Command)}}
	switch m.Command {
	case momproto.IS_CLUSTER_ADDRS:
		addrs := make([]string, len(m.Addrs))
		for i, a := range m.Addrs {
			addrs[i] = fmt.Sprintf("%d.%d.%d.%d", a>>24, a>>16&0xff, a>>8&0xff, a&0xff)
		}
		f = append(f, Field{"addrs", strings.Join(addrs, ",")})
	case momproto.IS_UPDATE:
		f = append(f, Field{"state", fmt.Sprintf("%#x", m.State)})
	case momproto.IS_STATUS, momproto.IS_GPU_STATUS:
		f = append(f, Field{"strings", itoa(len(m.Status))})
		for _, s := range m.Status {
			if name, value, ok := strings.Cut(s, "="); ok && (name == "state" || name == "jobs") {
				f = append(f, Field{name, value})
			}
		}
	}
	return f
}

func rmRequestFields(r *momproto.RMRequest) []Field {
	if len(r.Lines) == 0 {
		return nil
	}
	return []Field{{"lines", strings.Join(r.Lines, ",")}}
}

func rmReplyFields(r *momproto.RMReply) []Field {
	if len(r.Answers) == 0 {
		return nil
	}
	return []Field{{"answers", truncate(strings.Join(r.Answers, ","), 200)}}
}

func imFields(m *momproto.IMMessage) []Field {
	f := []Field{{"IM", momproto.IMCommandName(m.Command)}, {"job", m.JobID}, {"event", itoa(m.Event)}, {"task", itoa(m.FromTask)}}
	if m.Command == momproto.IM_ALL_OKAY || m.Command == momproto.IM_ERROR {
		f = append(f, Field{"reply-to", momproto.IMCommandName(m.ReplyTo)})
	}
	switch b := m.Body.(type) {
	case *momproto.IMJoinJob:
		f = append(f, Field{"node", itoa(b.NodeID)}, Field{"nodes", itoa(b.NumNodes)},
			Field{"stdout-port", itoa(b.StdoutPort)}, Field{"stderr-port", itoa(b.StderrPort)},
			Field{"attrs", attrNames(b.Attrs)})
	case *momproto.IMSpawnTask:
		f = append(f, Field{"parent-node", itoa(b.ParentNode)}, Field{"new-task", itoa(b.TaskID)},
			Field{"argv", strings.Join(b.Argv, " ")})
	case *momproto.Ints:
		f = append(f, Field{"values", ints(b.Values)})
	case *momproto.IMUsage:
		f = append(f, Field{"cput", strconv.FormatUint(b.CPUT, 10)}, Field{"mem", strconv.FormatUint(b.Mem, 10)},
			Field{"vmem", strconv.FormatUint(b.Vmem, 10)})
	case *momproto.IMGetInfo:
		f = append(f, Field{"name", b.Name})
	case *momproto.IMData:
		f = append(f, Field{"bytes", itoa(len(b.Data))})
	}
	return f
}

func tmRequestFields(r *momproto.TMRequest) []Field {
	f := []Field{{"job", r.JobID}, {"event", itoa(r.Event)}, {"task", strconv.FormatUint(uint64(r.FromTask), 10)}}
	switch b := r.Body.(type) {
	case *momproto.TMSpawn:
		f = append(f, Field{"node", itoa(b.Node)}, Field{"argv", strings.Join(b.Argv, " ")})
	case *momproto.Ints:
		f = append(f, Field{"values", ints(b.Values)})
	}
	return f
}

func tmReplyFields(r *momproto.TMReply) []Field {
	code := "TM_OKAY"
	if r.Code == momproto.TM_ERROR {
		code = "TM_ERROR"
	}
	f := []Field{{"code", code}, {"event", itoa(r.Event)}}
	switch b := r.Body.(type) {
	case *momproto.TMInitReply:
		f = append(f, Field{"nodes", ints(b.Nodes)}, Field{"job", b.JobID})
	case *momproto.Ints:
		f = append(f, Field{"values", ints(b.Values)})
	}
	return f
}

func ints(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = itoa(x)
	}
	return strings.Join(s, ",")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

package plus

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"gopbs/batchreq"
	"gopbs/pbs"
	"gopbs/resv"
)

const statusUsage = "plus_status [-r rsvID] [-o owner] [-n] [-s startTime] [-e endTime] [-ne numShowExpired] [-x]"

// Status is plus_status: it lists the reservations the options select
// (-r one id, -o one owner, -s/-e those overlapping the window, -ne how
// many ended or cancelled ones to include) as a table, with -n the
// assigned nodes too, or with -x as XML.
func Status(env *Env, args []string) int {
	c := &cmd{Env: env, prog: "plus_status", usage: statusUsage}
	if wantsHelp(args) {
		return c.help()
	}
	o, err := options(args, map[string]optKind{"r": value, "o": value, "n": flag, "s": value, "e": value,
		"ne": value, "x": flag})
	if err != nil {
		return c.usageError("%v", err)
	}
	sel := batchreq.ResvStatus{Owner: o["o"], Expired: -1}
	if id, ok := o["r"]; ok {
		if sel.ID, err = normID(id); err != nil {
			return c.badValue(err)
		}
	}
	var start, end time.Time
	if code := c.window(o, &start, &end, false); code != ExitOK {
		return code
	}
	if !start.IsZero() && !end.IsZero() && !end.After(start) {
		return c.badValue(fmt.Errorf("end %s is not after start %s", end.Format(resv.TimeLayout), start.Format(resv.TimeLayout)))
	}
	if !start.IsZero() {
		sel.Start = start.Unix()
	}
	if !end.IsZero() {
		sel.End = end.Unix()
	}
	if v, ok := o["ne"]; ok {
		if sel.Expired, err = strconv.Atoi(v); err != nil || sel.Expired < 0 {
			return c.badValue(fmt.Errorf("bad -ne %q: want a number of reservations", v))
		}
	}
	conn, code := c.connect()
	if conn == nil {
		return code
	}
	defer conn.Close()
	objs, err := conn.ResvStatus(sel)
	if err != nil {
		return c.failed("cannot get the reservations", err)
	}
	return printStatus(c, objs, statusFormat{nodes: has(o, "n"), xml: has(o, "x")})
}

type statusFormat struct{ nodes, xml bool }

// printStatus prints status objects as plus_status does.
func printStatus(c *cmd, objs []pbs.Status, f statusFormat) int {
	var list []*resv.Reservation
	for i := range objs {
		s := &objs[i]
		r, err := resv.FromAttrs(s.Name, func(name string) (string, bool) { return s.Get(name, "") })
		if err != nil {
			return c.failed("bad reply", err)
		}
		list = append(list, r)
	}
	if f.xml {
		out := xmlStatus{}
		for _, r := range list {
			out.Reservations = append(out.Reservations, toXML(r, c.loc()))
		}
		writeXML(c.Stdout, out)
		return ExitOK
	}
	tw := tabwriter.NewWriter(c.Stdout, 0, 0, 2, ' ', 0)
	head := "ID\tOwner\tState\tPending\tStart\tEnd\tNodes"
	if f.nodes {
		head += "\tAssigned"
	}
	fmt.Fprintln(tw, head)
	for _, r := range list {
		pending := r.Pending.String()
		if pending == "" {
			pending = "-"
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s", r.ID, r.Owner, r.State, pending,
			formatTime(r.Start, c.loc()), formatTime(r.End, c.loc()), nodesWanted(r))
		if f.nodes {
			line += "\t" + orDash(strings.Join(r.Assigned, "+"))
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	return ExitOK
}

func nodesWanted(r *resv.Reservation) string {
	if len(r.Nodes) > 0 {
		return strings.Join(r.Nodes, "+")
	}
	return strconv.Itoa(r.NodeCount)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// formatTime prints a time as the tables do: "2006-01-02 15:04:05" in loc.
func formatTime(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "-"
	}
	return t.In(loc).Format("2006-01-02 15:04:05")
}

// The XML forms (-x). Times are ISO 8601 with the offset.
type (
	xmlStatus struct {
		XMLName      xml.Name         `xml:"plus_status"`
		Reservations []xmlReservation `xml:"reservation"`
	}
	xmlReservation struct {
		ID        string   `xml:"id,attr"`
		Owner     string   `xml:"owner"`
		Users     *xmlList `xml:"users,omitempty"`
		State     string   `xml:"state"`
		Pending   string   `xml:"pending,omitempty"`
		Start     string   `xml:"start"`
		End       string   `xml:"end"`
		Duration  int64    `xml:"duration"`
		NodeCount int      `xml:"nodeCount"`
		Requested *xmlList `xml:"requestedNodes,omitempty"`
		Assigned  *xmlList `xml:"assignedNodes,omitempty"`
		Req       *xmlReq  `xml:"requirements,omitempty"`
	}
	// xmlList is a list of users (user elements) or nodes (node elements).
	xmlList struct {
		Users []string `xml:"user,omitempty"`
		Nodes []string `xml:"node,omitempty"`
	}
	xmlReq struct {
		Mem       int64  `xml:"mem,omitempty"`
		NCPU      int    `xml:"ncpu,omitempty"`
		Slots     int    `xml:"slots,omitempty"`
		Arch      string `xml:"arch,omitempty"`
		OS        string `xml:"os,omitempty"`
		Resources string `xml:"resources,omitempty"`
	}
	xmlResult struct {
		XMLName     xml.Name `xml:"plus_result"`
		Command     string   `xml:"command,attr"`
		ID          string   `xml:"id,omitempty"`
		Transaction bool     `xml:"transaction,omitempty"`
	}
	xmlAvail struct {
		XMLName   xml.Name `xml:"plus_availnodes"`
		Start     string   `xml:"start"`
		End       string   `xml:"end"`
		Partition string   `xml:"partition,omitempty"`
		Count     int      `xml:"count"`
		Nodes     *xmlList `xml:"nodes,omitempty"`
	}
)

func toXML(r *resv.Reservation, loc *time.Location) xmlReservation {
	x := xmlReservation{ID: r.ID, Owner: r.Owner, State: r.State.String(), Pending: r.Pending.String(),
		Start: r.Start.In(loc).Format(resv.TimeLayout), End: r.End.In(loc).Format(resv.TimeLayout),
		Duration: int64(r.Duration() / time.Second), NodeCount: r.Wanted()}
	if len(r.Users) > 0 {
		x.Users = &xmlList{Users: r.Users}
	}
	if len(r.Nodes) > 0 {
		x.Requested = &xmlList{Nodes: r.Nodes}
	}
	if len(r.Assigned) > 0 {
		x.Assigned = &xmlList{Nodes: r.Assigned}
	}
	q := xmlReq{Mem: r.Req.MemBytes, NCPU: r.Req.NCPU, Slots: r.Req.Slots, Arch: r.Req.Arch, OS: r.Req.OS, Resources: r.Req.LString()}
	if q != (xmlReq{}) {
		x.Req = &q
	}
	return x
}

// writeXML writes v with the XML declaration, indented, and a newline.
func writeXML(w io.Writer, v any) {
	b, err := xml.MarshalIndent(v, "", "  ")
	if err != nil {
		// Only unsupported types fail, a programming error.
		panic(fmt.Sprintf("plus: xml: %v", err))
	}
	fmt.Fprintf(w, "%s%s\n", xml.Header, b)
}

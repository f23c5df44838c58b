package logline

import (
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	at := time.Date(2026, 11, 22, 1, 20, 20, 0, time.UTC)
	cases := []struct {
		event                       int
		daemon, class, object, text string
		want                        string
	}{
		{EventSystem, "PBS_Server", ClassServer, "Log", "Log opened",
			"11/22/2026 01:20:20;0002;PBS_Server;Svr;Log;Log opened\n"},
		{EventDebug | EventForce, "pbs_mom", ClassNA, "mom_server_check_connection", "sending hello",
			"11/22/2026 01:20:20;0080;   pbs_mom;n/a;mom_server_check_connection;sending hello\n"},
		{EventJob, "pbs_sched", ClassJob, "12.vm", "a\r\nb\n",
			"11/22/2026 01:20:20;0008; pbs_sched;Job;12.vm;a\n11/22/2026 01:20:20;0008; pbs_sched;Job;12.vm;[continued]b\n"},
		{EventError, "a_very_long_daemon", ClassRequest, "x", "",
			"11/22/2026 01:20:20;0001;a_very_lon;Req;x;\n"},
	}
	for _, c := range cases {
		if got := Format(at, c.event, c.daemon, c.class, c.object, c.text); got != c.want {
			t.Errorf("Format(%q) =\n%q\nwant\n%q", c.text, got, c.want)
		}
	}
}

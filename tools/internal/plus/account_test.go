package plus

import (
	"path/filepath"
	"testing"
)

func TestAccount(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "server_priv", "accounting")
	// now is 2026-11-27 12:00 UTC. R1 (alice, 2 nodes, 2 h) ran and
	// ended yesterday; R2 (bob, 1 node, 10:00-14:00 today) was cancelled
	// at 11:00; R3 (alice, 3 nodes) is confirmed for 13:00-14:00; R4 was
	// 20 days ago; R5 (carol) was cancelled before its start.
	writeFile(t, filepath.Join(dir, "20261126"),
		"11/26/2026 09:00:00;Y;R1;owner=alice start=1795683600 end=1795690800 nodect=2\n"+
			"11/26/2026 09:30:00;Q;44.vm;queue=batch\n"+
			"11/26/2026 10:00:00;B;R1;owner=alice start=1795683600 end=1795690800 nodect=2 nodes=n1+n2\n"+
			"11/26/2026 12:00:00;F;R1;owner=alice start=1795683600 end=1795690800 nodect=2 nodes=n1+n2 actual_start=1795683600 actual_end=1795690800 jobs=3 job_node_seconds=9000\n")
	writeFile(t, filepath.Join(dir, "20261127"),
		"11/27/2026 08:00:00;Y;R2;owner=bob users=carol start=1795773600 end=1795788000 nodect=1\n"+
			"11/27/2026 10:00:00;B;R2;owner=bob users=carol start=1795773600 end=1795788000 nodect=1 nodes=n3\n"+
			"11/27/2026 11:00:00;K;R2;owner=bob users=carol start=1795773600 end=1795788000 nodect=1 nodes=n3\n"+
			"11/27/2026 11:10:00;Y;R3;owner=alice start=1795784400 end=1795788000 nodect=3\n"+
			"11/27/2026 11:20:00;Y;R5;owner=carol start=1795784400 end=1795788000 nodect=1\n"+
			"11/27/2026 11:30:00;K;R5;owner=carol start=1795784400 end=1795788000 nodect=1\n"+
			"11/27/2026 11:40:00;X;R9;owner=bad start=x end=1 nodect=1\n")
	writeFile(t, filepath.Join(dir, "20261107"),
		"11/07/2026 10:00:00;Y;R4;owner=alice start=1794045600 end=1794049200 nodect=1\n")
	other := filepath.Join(t.TempDir(), "elsewhere")
	writeFile(t, other, "11/27/2026 11:10:00;Y;R7;owner=dave start=1795784400 end=1795788000 nodect=4\n")
	skipped := "plus_account: " + filepath.Join(dir, "20261127") + ":7: start=\"x\": not a time (line skipped)\n"
	usage := "usage: " + accountUsage + "\n"
	total := func(n int, res, used string) string {
		return "Total: " + itoa(n) + " reservations, " + res + " node-hours reserved, " + used + " node-hours used, from 2026-11-20 12:00:00 to 2026-11-27 12:00:00\n"
	}
	runCases(t, Account, []testCase{
		{name: "last week", home: home, stderr: skipped,
			stdout: "ID  Owner  Start                End                  Nodes  Reserved  Used\n" +
				"R1  alice  2026-11-26 09:00:00  2026-11-26 11:00:00  2      4.00      2.50\n" +
				"R2  bob    2026-11-27 10:00:00  2026-11-27 14:00:00  1      1.00      0.00\n" +
				total(2, "5.00", "2.50")},
		{name: "long", home: home, args: []string{"-l", "-e", "+2h"}, stderr: skipped,
			stdout: "ID  Owner  Start                End                  Nodes  Reserved  Used  State      Users  Assigned  Jobs\n" +
				"R1  alice  2026-11-26 09:00:00  2026-11-26 11:00:00  2      4.00      2.50  DONE       -      n1+n2     3\n" +
				"R2  bob    2026-11-27 10:00:00  2026-11-27 14:00:00  1      1.00      0.00  CANCELED   carol  n3        0\n" +
				"R3  alice  2026-11-27 13:00:00  2026-11-27 14:00:00  3      3.00      0.00  CONFIRMED  -      -         0\n" +
				"R5  carol  2026-11-27 13:00:00  2026-11-27 14:00:00  1      0.00      0.00  CANCELED   -      -         0\n" +
				"Total: 4 reservations, 8.00 node-hours reserved, 2.50 node-hours used, from 2026-11-20 14:00:00 to 2026-11-27 14:00:00\n"},
		{name: "by owner", home: home, args: []string{"-o", "-e", "+2h"}, stderr: skipped,
			stdout: "Owner  Reservations  Reserved  Used\nalice  2             7.00      2.50\nbob    1             1.00      0.00\ncarol  1             0.00      0.00\n" +
				"Total: 4 reservations, 8.00 node-hours reserved, 2.50 node-hours used, from 2026-11-20 14:00:00 to 2026-11-27 14:00:00\n"},
		{name: "one owner", home: home, args: []string{"-o", "bob"}, stderr: skipped,
			stdout: "Owner  Reservations  Reserved  Used\nbob    1             1.00      0.00\n" + total(1, "1.00", "0.00")},
		{name: "by node", home: home, args: []string{"-n"}, stderr: skipped,
			stdout: "Node  Reservations  Reserved  Used\nn1    1             2.00      1.25\nn2    1             2.00      1.25\nn3    1             1.00      0.00\n" +
				total(2, "5.00", "2.50")},
		{name: "one node", home: home, args: []string{"-n", "n3"}, stderr: skipped,
			stdout: "Node  Reservations  Reserved  Used\nn3    1             1.00      0.00\n" + total(1, "1.00", "0.00")},
		{name: "summary", home: home, args: []string{"-S", "-d", "30"}, stderr: skipped,
			stdout: "Total: 3 reservations, 6.00 node-hours reserved, 2.50 node-hours used, from 2026-10-28 12:00:00 to 2026-11-27 12:00:00\n"},
		{name: "window", home: home, args: []string{"-s", "2026-11-26T10:00Z", "-e", "2026-11-26T10:30Z"},
			stdout: "ID  Owner  Start                End                  Nodes  Reserved  Used\n" +
				"R1  alice  2026-11-26 09:00:00  2026-11-26 11:00:00  2      1.00      2.50\n" +
				"Total: 1 reservations, 1.00 node-hours reserved, 2.50 node-hours used, from 2026-11-26 10:00:00 to 2026-11-26 10:30:00\n"},
		{name: "file", home: home, args: []string{"-f", other, "-e", "+3h"},
			stdout: "ID  Owner  Start                End                  Nodes  Reserved  Used\n" +
				"R7  dave   2026-11-27 13:00:00  2026-11-27 14:00:00  4      4.00      0.00\n" +
				"Total: 1 reservations, 4.00 node-hours reserved, 0.00 node-hours used, from 2026-11-20 15:00:00 to 2026-11-27 15:00:00\n"},
		{name: "missing file", home: home, args: []string{"-f", "/nonexistent/acct"},
			stderr: "plus_account: open /nonexistent/acct: no such file or directory\n", exit: 1},
		{name: "no files", home: t.TempDir(), stdout: "ID  Owner  Start  End  Nodes  Reserved  Used\n" + total(0, "0.00", "0.00")},
		{name: "owner and node", args: []string{"-o", "-n"}, stderr: "plus_account: group by owner (-o) or by node (-n), not both\n" + usage, exit: 2},
		{name: "start and days", args: []string{"-s", "+1h", "-d", "2"}, stderr: "plus_account: give -s startTime or -d days, not both\n" + usage, exit: 2},
		{name: "bad days", args: []string{"-d", "x"}, stderr: "plus_account: bad -d \"x\": want a number of days\n", exit: 2},
		{name: "backwards", args: []string{"-s", "+2h", "-e", "+1h"},
			stderr: "plus_account: end 2026-11-27T13:00:00Z is not after start 2026-11-27T14:00:00Z\n", exit: 2},
	})
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + itoa(n%10)
}

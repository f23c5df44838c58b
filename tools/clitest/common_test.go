package clitest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCommon covers what the commands share (spec 05 §1): --version and
// --about, the connection error lines, the fall-back server and the
// environment variables read by several commands.
func TestCommon(t *testing.T) {
	refusingIff := t.TempDir()
	if err := os.WriteFile(filepath.Join(refusingIff, "pbs_iff"), []byte("#!/bin/sh\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	runCases(t, []testCase{
		{name: "qsub --version", argv: []string{"qsub", "--version"}, sent: []string{}, stderr: "version: 2.5.13\n"},
		{name: "qstat --version", argv: []string{"qstat", "-f", "--version"}, sent: []string{}, stderr: "version: 2.5.13\n"},
		{name: "pbsnodes --version", argv: []string{"pbsnodes", "--version"}, sent: []string{}, stderr: "version: 2.5.13\n"},
		{name: "pbsnodes --about", argv: []string{"pbsnodes", "--about"}, sent: []string{},
			stderr: "package: GoPBS, compatible with TORQUE 2.5.13\n"},
		{name: "default server down", argv: []string{"qstat"}, env: []string{"PBS_BATCH_SERVICE_PORT=1"},
			sent: []string{},
			stderr: "Cannot connect to default server host 'vm' - check pbs_server daemon.\n" +
				"qstat: cannot connect to server vm (errno=111) Connection refused\n", exit: 111},
		{name: "named server down", argv: []string{"qstat", "@vm2:1"}, env: []string{"PBS_BATCH_SERVICE_PORT=1"}, sent: []string{},
			stderr: "Cannot connect to specified server host 'vm2:1'.\n" +
				"qstat: cannot connect to server vm2:1 (errno=111) Connection refused\n", exit: 111},
		{name: "named server down falls back to the default", argv: []string{"qstat", "-B", "vm2:1"},
			sent: []string{"+2+12+21{U}+0+0+0", disconnect}},
		{name: "job server down falls back to the default", argv: []string{"qdel", "1.vm2:1"},
			sent: []string{"+2+1+6{U}+1+2+71.vm2:1+0+0", disconnect}},
		{name: "fall-back server", argv: []string{"qstat", "-B"}, env: []string{"PBS_DEFAULT=vm:1,vm2"},
			sent: []string{statServer, disconnect}},
		{name: "job server down", argv: []string{"qdel", "1.vm2:1"}, env: []string{"PBS_BATCH_SERVICE_PORT=1"}, sent: []string{},
			stderr: "Cannot connect to specified server host 'vm2:1'.\n" +
				"qdel: cannot connect to server vm2:1 (errno=111) Connection refused\n", exit: 111},
		{name: "qchkpt connection error has no text", argv: []string{"qchkpt", "1.vm2:1"}, env: []string{"PBS_BATCH_SERVICE_PORT=1"}, sent: []string{},
			stderr: "Cannot connect to specified server host 'vm2:1'.\n" +
				"qchkpt: cannot connect to server vm2:1 (errno=111)\n", exit: 111},
		{name: "qrun connection error", argv: []string{"qrun", "1.vm2:1"}, env: []string{"PBS_BATCH_SERVICE_PORT=1"}, sent: []string{},
			stderr: "qrun: could not connect to server vm2:1 (111) Connection refused\n", exit: 2},
		{name: "pbsnodes connection error", argv: []string{"pbsnodes", "-s", "vm2:1"}, env: []string{"PBS_BATCH_SERVICE_PORT=1"}, sent: []string{},
			stderr: "Cannot connect to specified server host 'vm2:1'.\n" +
				"{B}/pbsnodes: cannot connect to server vm2:1, error=111 (Connection refused)\n", exit: 1},
		{name: "pbs_iff refuses", argv: []string{"qstat"}, env: []string{"PBSBINDIR=" + refusingIff},
			stderr: "No Permission.\nqstat: cannot connect to server vm (errno=15007) Unauthorized Request \n", exit: 15007 & 0xff},
		{name: "no server configured", argv: []string{"qstat"}, env: []string{"PBS_DEFAULT=", "PBS_HOME=" + t.TempDir()}, sent: []string{},
			stderr: "No default server name - check server_name file.\n" +
				"qstat: cannot connect to server  (errno=15036) No server specified\n", exit: 15036 & 0xff},
		{name: "TRQ_IFNAME", argv: []string{"qstat", "-B"}, cfg: "TRQ_IFNAME lo\n", sent: []string{statServer, disconnect}},
		{name: "TRQ_IFNAME unknown", argv: []string{"qstat"}, cfg: "TRQ_IFNAME gopbsnosuch0\n", sent: []string{},
			stderr: "System call failure.\nqstat: cannot connect to server vm (errno=15012)  System error: \n", exit: 15012 & 0xff},
		{name: "server_name file", argv: []string{"qstat", "-B"}, env: []string{"PBS_DEFAULT="},
			files: map[string]string{}, sent: []string{statServer, disconnect}},
		{name: "PBS_QSTAT_EXECONLY", argv: []string{"qstat"}, env: []string{"PBS_QSTAT_EXECONLY=1"},
			sent: []string{"+2+12+19{U}+0+0+12+15exec_queue_only", disconnect}},
	})
}

package capture

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// ManifestFile is the name of the manifest in the captures directory.
const ManifestFile = "manifest.jsonl"

// Scenario is one line of manifest.jsonl: the command run during one
// capture, exactly what it printed, and hints about the traffic.
type Scenario struct {
	ID         int             `json:"id"`
	Pcap       string          `json:"pcap"`
	User       string          `json:"user"`
	Argv       []string        `json:"argv"`
	Stdin      string          `json:"stdin,omitempty"`
	ExitCode   *int            `json:"exit_code"` // nil when the command had no exit status recorded
	Stdout     string          `json:"stdout"`
	Stderr     string          `json:"stderr"`
	Notes      string          `json:"notes"`
	ServerHost string          `json:"server_host"`
	TCPPorts   []int           `json:"tcp_ports_seen"`
	UDPPorts   []int           `json:"udp_ports_seen"`
	Seconds    float64         `json:"capture_seconds"`
	StartTime  string          `json:"start_time"`
	TCPStreams []TCPStreamHint `json:"tcp_streams"`
	UDPFlows   []UDPFlowHint   `json:"udp_flows"`

	// Round-2 fields (scenarios 78 and later).
	MainCommandT             *float64       `json:"main_command_t,omitempty"` // seconds from capture start
	ExtraCommands            []ExtraCommand `json:"extra_commands,omitempty"`
	PtyTranscript            []PtyEvent     `json:"pty_transcript,omitempty"`
	QsubListenPort           int            `json:"qsub_listen_port,omitempty"`
	PsAfter                  string         `json:"ps_after,omitempty"`
	JobProcessesWhileMomDown string         `json:"job_processes_while_mom_down,omitempty"`
}

// TCPStreamHint describes one TCP connection of a capture. Segments are
// human-oriented decode hints; the pcap bytes are the ground truth.
type TCPStreamHint struct {
	Stream   int      `json:"stream"`
	T0       float64  `json:"t0"`
	Client   int      `json:"client"` // client port
	Server   int      `json:"server"` // server port
	ClientIP string   `json:"client_ip,omitempty"`
	ServerIP string   `json:"server_ip,omitempty"`
	BytesC2S int      `json:"bytes_c2s"`
	BytesS2C int      `json:"bytes_s2c"`
	Segments []string `json:"segments"`
	Role     string   `json:"role,omitempty"`
}

// UDPFlowHint describes the RPP packets of one UDP flow ("1020->15003" or
// "10.250.0.2:1023->10.250.0.1:15003").
type UDPFlowHint struct {
	Flow    string   `json:"flow"`
	Packets int      `json:"packets"`
	RPP     []string `json:"rpp"`
}

// ExtraCommand is another command run during a capture.
type ExtraCommand struct {
	T        float64  `json:"t"` // seconds from capture start
	User     string   `json:"user"`
	Argv     []string `json:"argv"`
	ExitCode int      `json:"exit_code"`
	Stdout   string   `json:"stdout"`
	Stderr   string   `json:"stderr"`
	Note     string   `json:"note,omitempty"`
}

// PtyEvent is one entry of a pty transcript: the time in seconds from
// capture start and the text seen on the terminal.
type PtyEvent struct {
	T    float64
	Text string
}

// UnmarshalJSON decodes the manifest's [t, "text"] pair.
func (e *PtyEvent) UnmarshalJSON(b []byte) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil {
		return fmt.Errorf("pty transcript entry: %w", err)
	}
	if len(pair) != 2 {
		return fmt.Errorf("pty transcript entry: want [t, text], got %d elements", len(pair))
	}
	if err := json.Unmarshal(pair[0], &e.T); err != nil {
		return fmt.Errorf("pty transcript time: %w", err)
	}
	if err := json.Unmarshal(pair[1], &e.Text); err != nil {
		return fmt.Errorf("pty transcript text: %w", err)
	}
	return nil
}

// MarshalJSON encodes the event as the manifest's [t, "text"] pair.
func (e PtyEvent) MarshalJSON() ([]byte, error) {
	return json.Marshal([]any{e.T, e.Text})
}

// ReadManifest reads a manifest.jsonl file.
func ReadManifest(path string) ([]Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	defer f.Close()
	var out []Scenario
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var s Scenario
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", path, err)
	}
	return out, nil
}

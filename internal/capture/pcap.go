package capture

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/ip4defrag"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// linkTypeLinuxSLL2 is DLT_LINUX_SLL2, which this gopacket version does not
// decode itself (its LinkType has only 8 bits).
const linkTypeLinuxSLL2 = 276

// maxFrame is the largest frame accepted: an IP packet is at most 64 KiB.
const maxFrame = 1 << 20

// Capture is the content of one pcap file.
type Capture struct {
	Path      string     // file name as given to ReadFile ("" for Read)
	LinkType  uint32     // link-layer header type (DLT_*) of the file
	Frames    int        // frames read
	Conns     []*Conn    // TCP connections, in order of their first frame
	Datagrams []Datagram // UDP datagrams, in capture order
	// Other counts the frames that carried neither TCP nor UDP over IP
	// (ARP, ICMP, ...), or an IP fragment that is not yet complete.
	Other int
}

// Datagram is one UDP datagram (reassembled if it was IP-fragmented).
type Datagram struct {
	Frame   int // 1-based frame number in the file (of the last fragment)
	Time    time.Time
	Src     netip.AddrPort
	Dst     netip.AddrPort
	Payload []byte
}

// ReadFile reads and reassembles one capture file.
func ReadFile(path string) (*Capture, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	defer f.Close()
	c, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("capture %s: %w", path, err)
	}
	c.Path = path
	return c, nil
}

// packetSource is the part of the pcapgo readers Read needs.
type packetSource interface {
	ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
}

// Read reads a libpcap or pcapng stream and reassembles its TCP
// connections. Frames that cannot be decoded are counted in Other; a
// truncated final frame ends the capture without error.
func Read(r io.Reader) (*Capture, error) {
	br := bufio.NewReader(r)
	magic, err := br.Peek(4)
	if err != nil {
		return nil, fmt.Errorf("read header: %w", err)
	}
	var src packetSource
	var link uint32
	if binary.BigEndian.Uint32(magic) == 0x0A0D0D0A {
		ng, err := pcapgo.NewNgReader(br, pcapgo.DefaultNgReaderOptions)
		if err != nil {
			return nil, fmt.Errorf("pcapng: %w", err)
		}
		src, link = ng, uint32(ng.LinkType())
	} else {
		// pcapgo keeps the link type in 8 bits; read the real one.
		hdr, err := br.Peek(24)
		if err != nil {
			return nil, fmt.Errorf("pcap header: %w", err)
		}
		link = binary.LittleEndian.Uint32(hdr[20:])
		if m := binary.LittleEndian.Uint32(hdr); m != 0xa1b2c3d4 && m != 0xa1b23c4d {
			link = binary.BigEndian.Uint32(hdr[20:])
		}
		pr, err := pcapgo.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("pcap: %w", err)
		}
		// A record longer than this is corruption; refusing it keeps a
		// damaged length from allocating gigabytes.
		if pr.Snaplen() > maxFrame {
			pr.SetSnaplen(maxFrame)
		}
		src = pr
	}
	c := &Capture{LinkType: link}
	a := newAssembler()
	defrag := ip4defrag.NewIPv4Defragmenter()
	for {
		data, ci, err := src.ReadPacketData()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("frame %d: %w", c.Frames+1, err)
		}
		c.Frames++
		if !c.decodeFrame(link, data, ci, a, defrag) {
			c.Other++
		}
	}
	c.Conns = a.finish()
	return c, nil
}

// decodeFrame handles one frame and reports whether it was TCP or UDP.
func (c *Capture) decodeFrame(link uint32, data []byte, ci gopacket.CaptureInfo, a *assembler, defrag *ip4defrag.IPv4Defragmenter) bool {
	var pkt gopacket.Packet
	opts := gopacket.DecodeOptions{NoCopy: true}
	if link == linkTypeLinuxSLL2 {
		// SLL2: protocol type (2 bytes) first, 20-byte header.
		if len(data) < 20 {
			return false
		}
		pkt = gopacket.NewPacket(data[20:], layers.EthernetType(binary.BigEndian.Uint16(data)), opts)
	} else if link <= 0xff {
		pkt = gopacket.NewPacket(data, layers.LinkType(link), opts)
	} else {
		return false
	}
	var srcIP, dstIP netip.Addr
	switch ip := pkt.NetworkLayer().(type) {
	case *layers.IPv4:
		if ip.Flags&layers.IPv4MoreFragments != 0 || ip.FragOffset != 0 {
			whole, err := defrag.DefragIPv4WithTimestamp(ip, ci.Timestamp)
			if err != nil || whole == nil {
				return false
			}
			pkt = gopacket.NewPacket(whole.Payload, whole.Protocol.LayerType(), opts)
			ip = whole
		}
		srcIP, _ = netip.AddrFromSlice(ip.SrcIP.To4())
		dstIP, _ = netip.AddrFromSlice(ip.DstIP.To4())
	case *layers.IPv6:
		srcIP, _ = netip.AddrFromSlice(ip.SrcIP)
		dstIP, _ = netip.AddrFromSlice(ip.DstIP)
	default:
		return false
	}
	switch t := pkt.TransportLayer().(type) {
	case *layers.TCP:
		a.add(c.Frames, ci.Timestamp,
			netip.AddrPortFrom(srcIP, uint16(t.SrcPort)),
			netip.AddrPortFrom(dstIP, uint16(t.DstPort)), t)
		return true
	case *layers.UDP:
		c.Datagrams = append(c.Datagrams, Datagram{
			Frame:   c.Frames,
			Time:    ci.Timestamp,
			Src:     netip.AddrPortFrom(srcIP, uint16(t.SrcPort)),
			Dst:     netip.AddrPortFrom(dstIP, uint16(t.DstPort)),
			Payload: bytes.Clone(t.Payload),
		})
		return true
	}
	return false
}

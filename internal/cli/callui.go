package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/peer"
)

// callUI shows a call's progress and log messages. On a terminal it keeps
// one progress line at the bottom and prints log messages above it; on
// anything else it prints plain lines.
type callUI struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	color    bool
	spin     int
	bar      string // the progress line currently drawn, "" if none
	// width is the terminal's width now (0 when unknown): the progress
	// line is cut to fit it, since a line that wraps cannot be redrawn
	// in place and would leave a trail of lines.
	width func() int
	// cancelled is set once the cancel is on its way (just before it is
	// written): progress from then on crossed it in flight, and is marked
	// so.
	cancelled bool
	// redact knows the run's secrets: a text is redacted before it is
	// cut to maxUIText, so that the cut cannot hide part of a secret.
	redact *chrono.Redactor
}

// maxUIText bounds one untrusted text call prints (a log message, a
// progress message, an error).
const maxUIText = 4 << 10

// text makes untrusted text safe to print: redacted, cut, sanitised.
func (u *callUI) text(s string) string {
	return chrono.Sanitize(chrono.Clip(u.redact.String(s), maxUIText), false)
}

const barWidth = 30

// crossedMark marks progress that arrived after the cancel was sent: the
// server sent it before it saw the cancel (CAN-11, CAN-15).
const crossedMark = " (crossed the cancel in flight)"

// SetCancelled says whether the cancel is on its way: call sets it just
// before the cancel is written, and clears it if the cancel was not sent.
func (u *callUI) SetCancelled(on bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.cancelled = on
}

// fit cuts line to the terminal's width, less one column so that the
// cursor never wraps; it counts runes, which the sanitised text is.
func (u *callUI) fit(line string) string {
	w := u.widthOr80()
	r := []rune(line)
	if len(r) > w-1 {
		return string(r[:max(w-2, 0)]) + "…"
	}
	return line
}

var spinner = []string{"|", "/", "-", "\\"}

// levelColors maps RFC 5424 levels (LOG-2) to ANSI colours.
var levelColors = map[string]string{
	"debug": "\x1b[2m", "info": "\x1b[36m", "notice": "\x1b[34m", "warning": "\x1b[33m",
	"error": "\x1b[31m", "critical": "\x1b[1;31m", "alert": "\x1b[1;31m", "emergency": "\x1b[1;37;41m",
}

// Progress draws a progress notification: a bar with a percentage when
// total is known, a spinner and the count otherwise.
func (u *callUI) Progress(p peer.Progress) {
	u.mu.Lock()
	defer u.mu.Unlock()
	msg := ""
	if p.Message != "" {
		msg = "  " + u.text(p.Message)
	}
	if u.cancelled {
		msg = crossedMark + msg
	}
	if !u.terminal {
		if p.Total != nil {
			fmt.Fprintf(u.w, "progress %s/%s%s\n", num(p.Progress), num(*p.Total), msg)
		} else {
			fmt.Fprintf(u.w, "progress %s%s\n", num(p.Progress), msg)
		}
		return
	}
	var line string
	if p.Total != nil && *p.Total > 0 {
		frac := min(max(p.Progress / *p.Total, 0), 1)
		filled := int(frac * barWidth)
		line = fmt.Sprintf("[%s%s] %3.0f%%  %s/%s%s", strings.Repeat("#", filled), strings.Repeat(".", barWidth-filled),
			frac*100, num(p.Progress), num(*p.Total), msg)
		if len([]rune(line)) > u.widthOr80()-1 {
			// A narrow terminal: a shorter bar before the text is cut.
			short := min(barWidth, max(u.widthOr80()/4, 5))
			filled = int(frac * float64(short))
			line = fmt.Sprintf("[%s%s] %3.0f%%%s", strings.Repeat("#", filled), strings.Repeat(".", short-filled), frac*100, msg)
		}
	} else {
		u.spin++
		line = fmt.Sprintf("%s %s%s", spinner[u.spin%len(spinner)], num(p.Progress), msg)
	}
	line = u.fit(line)
	u.bar = line
	fmt.Fprintf(u.w, "\r\x1b[K%s", line)
}

// Log prints a notifications/message above the progress line.
func (u *callUI) Log(level, logger, data string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	level = u.text(level)
	text := u.text(data)
	if logger != "" {
		text = u.text(logger) + ": " + text
	}
	tag := "[" + level + "]"
	if u.color {
		tag = levelColors[level] + tag + "\x1b[0m"
	}
	if u.terminal {
		// The log line goes above the bar, whole (it may wrap: it is
		// not redrawn), and the bar is drawn again below it.
		fmt.Fprintf(u.w, "\r\x1b[K%s %s\n", tag, text)
		if u.bar != "" {
			fmt.Fprint(u.w, u.bar)
		}
		return
	}
	fmt.Fprintf(u.w, "log %s %s\n", tag, text)
}

// Line prints a status line, below a finished progress line.
func (u *callUI) Line(format string, args ...any) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.terminal && u.bar != "" {
		fmt.Fprint(u.w, "\r\x1b[K"+u.bar+"\n")
		u.bar = ""
	}
	// The arguments are sanitised by the caller; a status line may hold
	// a server's whole error message, so it is cut here.
	fmt.Fprintln(u.w, chrono.Clip(u.redact.String(fmt.Sprintf(format, args...)), maxUIText))
}

func (u *callUI) widthOr80() int {
	if u.width != nil {
		if n := u.width(); n > 0 {
			return n
		}
	}
	return 80
}

func num(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", f), "0"), ".")
}

package tokenizer

import "strings"

// byteRunes maps each byte to the printable rune GPT-2's ByteLevel
// pre-tokenizer stands it in for (bytes_to_unicode in GPT-2's encoder.py):
// the printable Latin-1 bytes map to themselves, the other 68 to U+0100 on.
var byteRunes = func() (m [256]rune) {
	n := rune(0)
	for b := 0; b < 256; b++ {
		if ('!' <= b && b <= '~') || (0xA1 <= b && b <= 0xAC) || (0xAE <= b && b <= 0xFF) {
			m[b] = rune(b)
		} else {
			m[b] = 256 + n
			n++
		}
	}
	return m
}()

// runeBytes inverts byteRunes; -1 for runes outside the alphabet.
var runeBytes = func() (m [324]int16) {
	for i := range m {
		m[i] = -1
	}
	for b, r := range byteRunes {
		m[r] = int16(b)
	}
	return m
}()

// byteLevel returns s with every byte replaced by its byte-level rune.
func byteLevel(s string) string {
	var sb strings.Builder
	sb.Grow(2 * len(s))
	for i := 0; i < len(s); i++ {
		sb.WriteRune(byteRunes[s[i]])
	}
	return sb.String()
}

// unByteLevel returns the bytes a byte-level token stands for. Runes outside
// the byte-level alphabet are kept as their UTF-8 encoding.
func unByteLevel(tok string) string {
	var sb strings.Builder
	sb.Grow(len(tok))
	for _, r := range tok {
		if r >= 0 && int(r) < len(runeBytes) && runeBytes[r] >= 0 {
			sb.WriteByte(byte(runeBytes[r]))
			continue
		}
		sb.WriteString(string(r))
	}
	return sb.String()
}

package tokens

import "sync"

var reverses sync.Map // *Encoding → []string: the token of each rank

// token returns the token of rank r (a linear build on first use).
func (t *table) token(r uint32) (string, bool) {
	v, ok := reverses.Load(t)
	if !ok {
		size := 0
		for _, s := range t.slots {
			if s.n != 0 {
				size = max(size, int(s.rank)+1)
			}
		}
		for _, s := range t.slots8 {
			if s.n != 0 {
				size = max(size, int(s.rank)+1)
			}
		}
		for _, rank := range t.long {
			size = max(size, int(rank)+1)
		}
		rev := make([]string, size)
		for _, s := range t.slots8 {
			if s.n != 0 {
				b := make([]byte, s.n)
				for i := range b {
					b[i] = byte(s.key >> (8 * i))
				}
				rev[s.rank] = string(b)
			}
		}
		for _, s := range t.slots {
			if s.n != 0 {
				b := make([]byte, s.n)
				for i := range b {
					if i < 8 {
						b[i] = byte(s.key >> (8 * i))
					} else {
						b[i] = byte(s.key1 >> (8 * (i - 8)))
					}
				}
				rev[s.rank] = string(b)
			}
		}
		for tok, rank := range t.long {
			rev[rank] = tok
		}
		v, _ = reverses.LoadOrStore(t, rev)
	}
	rev := v.([]string)
	if int(r) >= len(rev) || rev[r] == "" {
		return "", false
	}
	return rev[r], true
}

// Encode returns the token ids (ranks) of text.
func (e *Encoding) Encode(text string) []int {
	c := e.Counter()
	defer c.Release()
	var ids []int
	src := []byte(text)
	c.sc = scanner{s: src}
	for i := 0; i < len(src); {
		j := c.next(i)
		piece := src[i:j]
		if r, ok := e.ranks.rank(piece); ok {
			ids = append(ids, int(r))
		} else {
			p := c.m.parts(piece)
			for k := 0; k+1 < len(p); k++ {
				r, _ := e.ranks.rank(piece[p[k]:p[k+1]])
				ids = append(ids, int(r))
			}
		}
		i = j
	}
	c.sc = scanner{}
	return ids
}

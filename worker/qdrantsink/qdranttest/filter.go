package qdranttest

import (
	"slices"
	"strings"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// checkFilter rejects conditions the double does not implement, so a test
// never passes because a filter was silently ignored.
func checkFilter(f *qdrant.Filter) error {
	all := append(append(append([]*qdrant.Condition{}, f.GetMust()...), f.GetShould()...), f.GetMustNot()...)
	all = append(all, f.GetMinShould().GetConditions()...)
	for _, c := range all {
		switch cc := c.GetConditionOneOf().(type) {
		case *qdrant.Condition_Filter:
			if err := checkFilter(cc.Filter); err != nil {
				return err
			}
		case *qdrant.Condition_HasId:
			for _, id := range cc.HasId.GetHasId() {
				if _, err := idKey(id); err != nil {
					return err
				}
			}
		case *qdrant.Condition_IsEmpty, *qdrant.Condition_IsNull:
		case *qdrant.Condition_Field:
			fc := cc.Field
			if fc.GetKey() == "" {
				return status.Error(codes.InvalidArgument, "Wrong input: field condition without a key")
			}
			if fc.GeoBoundingBox != nil || fc.GeoRadius != nil || fc.GeoPolygon != nil || fc.DatetimeRange != nil || fc.ValuesCount != nil {
				return status.Error(codes.Unimplemented, "qdranttest: geo, datetime and values_count conditions are not supported")
			}
			if fc.Match != nil {
				switch fc.Match.GetMatchValue().(type) {
				case *qdrant.Match_Keyword, *qdrant.Match_Integer, *qdrant.Match_Boolean, *qdrant.Match_Keywords,
					*qdrant.Match_Integers, *qdrant.Match_ExceptKeywords, *qdrant.Match_ExceptIntegers:
				default:
					return status.Error(codes.Unimplemented, "qdranttest: full-text match is not supported")
				}
			}
		default:
			return status.Errorf(codes.Unimplemented, "qdranttest: condition %T is not supported", cc)
		}
	}
	return nil
}

// matchFilter evaluates a filter checked by checkFilter.
func matchFilter(p *point, f *qdrant.Filter) bool {
	for _, c := range f.GetMust() {
		if !matchCondition(p, c) {
			return false
		}
	}
	for _, c := range f.GetMustNot() {
		if matchCondition(p, c) {
			return false
		}
	}
	if len(f.GetShould()) > 0 {
		any := false
		for _, c := range f.GetShould() {
			if matchCondition(p, c) {
				any = true
				break
			}
		}
		if !any {
			return false
		}
	}
	if ms := f.GetMinShould(); ms != nil {
		n := uint64(0)
		for _, c := range ms.GetConditions() {
			if matchCondition(p, c) {
				n++
			}
		}
		if n < ms.GetMinCount() {
			return false
		}
	}
	return true
}

func matchCondition(p *point, c *qdrant.Condition) bool {
	switch cc := c.GetConditionOneOf().(type) {
	case *qdrant.Condition_Filter:
		return matchFilter(p, cc.Filter)
	case *qdrant.Condition_HasId:
		k, _ := idKey(p.id)
		for _, id := range cc.HasId.GetHasId() {
			if kk, _ := idKey(id); kk == k {
				return true
			}
		}
		return false
	case *qdrant.Condition_IsEmpty:
		return isEmpty(lookup(p.payload, cc.IsEmpty.GetKey()))
	case *qdrant.Condition_IsNull:
		return isNull(lookup(p.payload, cc.IsNull.GetKey()))
	case *qdrant.Condition_Field:
		return matchField(lookup(p.payload, cc.Field.GetKey()), cc.Field)
	}
	return false
}

// lookup returns the values at a dotted path, flattening arrays on the way.
func lookup(payload map[string]*qdrant.Value, path string) []*qdrant.Value {
	parts := strings.Split(path, ".")
	cur := []*qdrant.Value{}
	if v, ok := payload[strings.TrimSuffix(parts[0], "[]")]; ok {
		cur = append(cur, v)
	}
	for _, part := range parts[1:] {
		var next []*qdrant.Value
		for _, v := range flatten(cur) {
			if sv := v.GetStructValue(); sv != nil {
				if e, ok := sv.GetFields()[strings.TrimSuffix(part, "[]")]; ok {
					next = append(next, e)
				}
			}
		}
		cur = next
	}
	return cur
}

func flatten(vs []*qdrant.Value) []*qdrant.Value {
	var out []*qdrant.Value
	for _, v := range vs {
		if l := v.GetListValue(); l != nil {
			out = append(out, l.GetValues()...)
		} else {
			out = append(out, v)
		}
	}
	return out
}

func isEmpty(vs []*qdrant.Value) bool {
	for _, v := range flatten(vs) {
		if _, null := v.GetKind().(*qdrant.Value_NullValue); !null {
			return false
		}
	}
	return true
}

func isNull(vs []*qdrant.Value) bool {
	for _, v := range vs {
		if _, null := v.GetKind().(*qdrant.Value_NullValue); null {
			return true
		}
	}
	return false
}

func matchField(vs []*qdrant.Value, fc *qdrant.FieldCondition) bool {
	vals := flatten(vs)
	if fc.IsEmpty != nil {
		return isEmpty(vs) == fc.GetIsEmpty()
	}
	if fc.IsNull != nil {
		return isNull(vs) == fc.GetIsNull()
	}
	if m := fc.GetMatch(); m != nil {
		switch mv := m.GetMatchValue().(type) {
		case *qdrant.Match_ExceptKeywords:
			for _, v := range vals {
				if s, ok := v.GetKind().(*qdrant.Value_StringValue); ok && slices.Contains(mv.ExceptKeywords.GetStrings(), s.StringValue) {
					return false
				}
			}
			return true
		case *qdrant.Match_ExceptIntegers:
			for _, v := range vals {
				if i, ok := v.GetKind().(*qdrant.Value_IntegerValue); ok && slices.Contains(mv.ExceptIntegers.GetIntegers(), i.IntegerValue) {
					return false
				}
			}
			return true
		}
		for _, v := range vals {
			if matchValue(v, m) {
				return true
			}
		}
		return false
	}
	if r := fc.GetRange(); r != nil {
		for _, v := range vals {
			var x float64
			switch k := v.GetKind().(type) {
			case *qdrant.Value_IntegerValue:
				x = float64(k.IntegerValue)
			case *qdrant.Value_DoubleValue:
				x = k.DoubleValue
			default:
				continue
			}
			if (r.Lt == nil || x < r.GetLt()) && (r.Lte == nil || x <= r.GetLte()) &&
				(r.Gt == nil || x > r.GetGt()) && (r.Gte == nil || x >= r.GetGte()) {
				return true
			}
		}
		return false
	}
	return false
}

func matchValue(v *qdrant.Value, m *qdrant.Match) bool {
	switch mv := m.GetMatchValue().(type) {
	case *qdrant.Match_Keyword:
		s, ok := v.GetKind().(*qdrant.Value_StringValue)
		return ok && s.StringValue == mv.Keyword
	case *qdrant.Match_Keywords:
		s, ok := v.GetKind().(*qdrant.Value_StringValue)
		return ok && slices.Contains(mv.Keywords.GetStrings(), s.StringValue)
	case *qdrant.Match_Integer:
		i, ok := v.GetKind().(*qdrant.Value_IntegerValue)
		return ok && i.IntegerValue == mv.Integer
	case *qdrant.Match_Integers:
		i, ok := v.GetKind().(*qdrant.Value_IntegerValue)
		return ok && slices.Contains(mv.Integers.GetIntegers(), i.IntegerValue)
	case *qdrant.Match_Boolean:
		b, ok := v.GetKind().(*qdrant.Value_BoolValue)
		return ok && b.BoolValue == mv.Boolean
	}
	return false
}

package qdranttest

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// UpdateAliases applies alias operations all together or not at all, as
// Qdrant does.
func (cs *collectionsServer) UpdateAliases(_ context.Context, req *qdrant.ChangeAliases) (*qdrant.CollectionOperationResponse, error) {
	cs.s.mu.Lock()
	defer cs.s.mu.Unlock()
	next := map[string]string{}
	maps.Copy(next, cs.s.aliases)
	for _, op := range req.GetActions() {
		switch a := op.GetAction().(type) {
		case *qdrant.AliasOperations_CreateAlias:
			name, coll := a.CreateAlias.GetAliasName(), a.CreateAlias.GetCollectionName()
			if cs.s.collections[coll] == nil {
				return nil, status.Errorf(codes.NotFound, "Not found: Collection `%s` doesn't exist!", coll)
			}
			next[name] = coll
		case *qdrant.AliasOperations_RenameAlias:
			old := a.RenameAlias.GetOldAliasName()
			coll, ok := next[old]
			if !ok {
				return nil, status.Errorf(codes.NotFound, "Not found: Alias `%s` doesn't exist!", old)
			}
			delete(next, old)
			next[a.RenameAlias.GetNewAliasName()] = coll
		case *qdrant.AliasOperations_DeleteAlias:
			name := a.DeleteAlias.GetAliasName()
			if _, ok := next[name]; !ok {
				return nil, status.Errorf(codes.NotFound, "Not found: Alias `%s` doesn't exist!", name)
			}
			delete(next, name)
		default:
			return nil, invalid("unknown alias operation")
		}
	}
	cs.s.aliases = next
	return &qdrant.CollectionOperationResponse{Result: true}, nil
}

// ListAliases lists every alias.
func (cs *collectionsServer) ListAliases(context.Context, *qdrant.ListAliasesRequest) (*qdrant.ListAliasesResponse, error) {
	return cs.listAliases(""), nil
}

// ListCollectionAliases lists the aliases of one collection.
func (cs *collectionsServer) ListCollectionAliases(_ context.Context, req *qdrant.ListCollectionAliasesRequest) (*qdrant.ListAliasesResponse, error) {
	return cs.listAliases(req.GetCollectionName()), nil
}

// listAliases lists the aliases of coll, or all of them when coll is "",
// by name.
func (cs *collectionsServer) listAliases(coll string) *qdrant.ListAliasesResponse {
	cs.s.mu.Lock()
	defer cs.s.mu.Unlock()
	resp := &qdrant.ListAliasesResponse{}
	for a, c := range cs.s.aliases {
		if coll == "" || c == coll {
			resp.Aliases = append(resp.Aliases, &qdrant.AliasDescription{AliasName: a, CollectionName: c})
		}
	}
	slices.SortFunc(resp.Aliases, func(x, y *qdrant.AliasDescription) int {
		return strings.Compare(x.GetAliasName(), y.GetAliasName())
	})
	return resp
}

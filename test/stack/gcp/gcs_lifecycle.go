// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package gcp

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The front's object listing and lifecycle, played the way GCS documents them.

// listedObject is one object generation of a fake-gcs-server listing, kept as it came.
type listedObject struct {
	Name       string
	Generation int64
	raw        json.RawMessage
}

// pagePosition is where a page of the front's listing ended: GCS pages by name and generation.
type pagePosition struct {
	Name       string `json:"n"`
	Generation int64  `json:"g"`
}

func (p pagePosition) token() string {
	raw, _ := json.Marshal(p)
	return base64.RawURLEncoding.EncodeToString(raw)
}

func parsePosition(token string) (pagePosition, bool) {
	var p pagePosition
	raw, err := base64.RawURLEncoding.DecodeString(token)
	return p, err == nil && json.Unmarshal(raw, &p) == nil
}

func compareListed(a, b listedObject) int {
	return cmp.Or(strings.Compare(a.Name, b.Name), cmp.Compare(a.Generation, b.Generation))
}

// backendList asks fake-gcs-server for one page of a listing: query without paging, starting at
// name startAt (inclusive), at most max objects. It returns the objects and fake-gcs-server's
// next page token (a name; "" when the listing ended).
func (g *GCS) backendList(bucket string, query url.Values, startAt string, maxResults int) (int, []listedObject, string, error) {
	q := url.Values{}
	for _, k := range []string{"prefix", "versions", "startOffset", "endOffset", "matchGlob"} {
		if v := query.Get(k); v != "" {
			q.Set(k, v)
		}
	}
	if startAt != "" && startAt > q.Get("startOffset") {
		q.Set("startOffset", startAt)
	}
	if maxResults > 0 {
		q.Set("maxResults", strconv.Itoa(maxResults))
	}
	u := g.backend.JoinPath("storage", "v1", "b", bucket, "o")
	u.RawQuery = q.Encode()
	resp, err := g.client.Get(u.String())
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil, "", nil
	}
	var page struct {
		Items         []json.RawMessage `json:"items"`
		NextPageToken string            `json:"nextPageToken"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		return 0, nil, "", err
	}
	out := make([]listedObject, 0, len(page.Items))
	for _, raw := range page.Items {
		var o struct {
			Name       string `json:"name"`
			Generation int64  `json:"generation,string"`
		}
		if err := json.Unmarshal(raw, &o); err != nil {
			return 0, nil, "", err
		}
		out = append(out, listedObject{Name: o.Name, Generation: o.Generation, raw: raw})
	}
	return http.StatusOK, out, page.NextPageToken, nil
}

// listObjects serves an object listing without delimiter in pages of at most 1,000 (or the
// client's maxResults), ordered by name and generation, with a page token that names both, as
// GCS does. fake-gcs-server pages by name alone: its next page starts again at the first
// generation of the name it stopped in, so with more generations of one name than a page holds
// it returns the same page forever.
func (g *GCS) listObjects(w http.ResponseWriter, r *http.Request, bucket string) {
	query := r.URL.Query()
	maxResults, err := strconv.Atoi(query.Get("maxResults"))
	if err != nil || maxResults <= 0 || maxResults > 1000 {
		maxResults = 1000
	}
	var after *pagePosition
	if t := query.Get("pageToken"); t != "" {
		p, ok := parsePosition(t)
		if !ok {
			jsonError(w, http.StatusBadRequest, "invalid", "Invalid page token.")
			return
		}
		after = &p
	}
	startAt := ""
	if after != nil {
		startAt = after.Name
	}
	var page []listedObject
	more := false
	for fetch := maxResults + 1; ; fetch *= 2 {
		status, objects, next, err := g.backendList(bucket, query, startAt, fetch)
		if err != nil {
			jsonError(w, http.StatusBadGateway, "backendError", err.Error())
			return
		}
		if status != http.StatusOK {
			jsonError(w, status, "notFound", "The specified bucket does not exist.")
			return
		}
		// Only names before fake-gcs-server's next name are complete in its page.
		complete := objects[:0]
		for _, o := range objects {
			if (next == "" || o.Name < next) && (after == nil || compareListed(o, listedObject{Name: after.Name, Generation: after.Generation}) > 0) {
				complete = append(complete, o)
			}
		}
		slices.SortFunc(complete, compareListed)
		if len(complete) > maxResults || next == "" {
			more = len(complete) > maxResults
			page = complete[:min(maxResults, len(complete))]
			break
		}
	}
	items := make([]json.RawMessage, len(page))
	for i, o := range page {
		items[i] = o.raw
	}
	out := map[string]any{"kind": "storage#objects", "items": items}
	if more {
		last := page[len(page)-1]
		out["nextPageToken"] = pagePosition{Name: last.Name, Generation: last.Generation}.token()
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// lifecycleRule is a GCS lifecycle rule as the JSON API carries it.
type lifecycleRule struct {
	Action struct {
		Type string `json:"type"`
	} `json:"action"`
	Condition map[string]json.RawMessage `json:"condition"`
}

// lifecycleObject is what a lifecycle condition looks at.
type lifecycleObject struct {
	Name        string `json:"name"`
	Generation  int64  `json:"generation,string"`
	TimeCreated string `json:"timeCreated"`
	TimeDeleted string `json:"timeDeleted"`
	CustomTime  string `json:"customTime"`
}

// RunLifecycle runs the bucket's kept lifecycle rules once at the time now, the way GCS runs them
// (documented conditions; a rule's conditions must all hold; an object under retention is left
// until its retention allows), deletes every generation a Delete rule matches, and returns them as
// "name#generation". fake-gcs-server has no lifecycle; this is the front's play of it. A
// condition it does not know is an error, never ignored.
func (g *GCS) RunLifecycle(bucket string, now time.Time) ([]string, error) {
	g.mu.Lock()
	b := g.buckets[bucket]
	var lc struct {
		Rule []lifecycleRule `json:"rule"`
	}
	var period int64
	if b != nil {
		_ = json.Unmarshal(b.fields["lifecycle"], &lc)
		period = retentionSeconds(b.fields["retentionPolicy"])
	}
	g.mu.Unlock()
	if b == nil {
		return nil, fmt.Errorf("no bucket %q", bucket)
	}
	_, listed, _, err := g.backendList(bucket, url.Values{"versions": {"true"}}, "", 0)
	if err != nil {
		return nil, err
	}
	var deleted []string
	for _, l := range listed {
		var o lifecycleObject
		if err := json.Unmarshal(l.raw, &o); err != nil {
			return nil, err
		}
		created, _ := time.Parse(time.RFC3339Nano, o.TimeCreated)
		if period > 0 && now.Sub(created) < time.Duration(period)*time.Second {
			continue // GCS does not delete an object its retention still holds
		}
		match := false
		for _, rule := range lc.Rule {
			if rule.Action.Type != "Delete" {
				continue
			}
			ok, err := ruleMatches(rule, o, now)
			if err != nil {
				return nil, err
			}
			match = match || ok
		}
		if !match {
			continue
		}
		u := g.backend.JoinPath("storage", "v1", "b", bucket, "o", o.Name)
		u.RawQuery = "generation=" + strconv.FormatInt(o.Generation, 10)
		req, _ := http.NewRequest(http.MethodDelete, u.String(), bytes.NewReader(nil))
		resp, err := g.client.Do(req)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return nil, fmt.Errorf("deleting %s#%d: HTTP %d", o.Name, o.Generation, resp.StatusCode)
		}
		deleted = append(deleted, fmt.Sprintf("%s#%d", o.Name, o.Generation))
	}
	return deleted, nil
}

// ruleMatches evaluates every condition of rule on o at now.
func ruleMatches(rule lifecycleRule, o lifecycleObject, now time.Time) (bool, error) {
	if len(rule.Condition) == 0 {
		return false, fmt.Errorf("lifecycle rule without conditions")
	}
	live := o.TimeDeleted == ""
	created, _ := time.Parse(time.RFC3339Nano, o.TimeCreated)
	noncurrent, _ := time.Parse(time.RFC3339Nano, o.TimeDeleted)
	custom, _ := time.Parse(time.RFC3339Nano, o.CustomTime)
	days := func(raw json.RawMessage) time.Duration {
		n, _ := strconv.ParseInt(strings.Trim(string(raw), `"`), 10, 64)
		return time.Duration(n) * 24 * time.Hour
	}
	date := func(raw json.RawMessage) time.Time {
		var s string
		_ = json.Unmarshal(raw, &s)
		d, _ := time.Parse(time.DateOnly, s)
		return d
	}
	for name, raw := range rule.Condition {
		var ok bool
		switch name {
		case "age":
			ok = now.Sub(created) >= days(raw)
		case "isLive":
			ok = string(raw) == strconv.FormatBool(live)
		case "matchesPrefix":
			var prefixes []string
			_ = json.Unmarshal(raw, &prefixes)
			ok = slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(o.Name, p) })
		case "daysSinceCustomTime":
			ok = o.CustomTime != "" && now.Sub(custom) >= days(raw)
		case "customTimeBefore":
			ok = o.CustomTime != "" && custom.Before(date(raw))
		case "daysSinceNoncurrentTime":
			ok = !live && now.Sub(noncurrent) >= days(raw)
		case "noncurrentTimeBefore":
			ok = !live && noncurrent.Before(date(raw))
		case "createdBefore":
			ok = created.Before(date(raw))
		default:
			return false, fmt.Errorf("lifecycle condition %q is not played by the front", name)
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

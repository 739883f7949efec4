// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package framework

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ApplyChartRBAC creates the identities the chart rendered (objs): its ServiceAccounts, roles and
// bindings, and nothing else of it. edit, if set, may change each ClusterRole's rules first (by
// the role's name): a test takes a rule away to show the rest does not suffice.
func ApplyChartRBAC(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, edit func(role string, rules []any) []any) error {
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterRole":
			if edit != nil {
				rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
				if err := unstructured.SetNestedSlice(o.Object, edit(o.GetName(), rules), "rules"); err != nil {
					return err
				}
			}
		case "ServiceAccount", "Role", "RoleBinding", "ClusterRoleBinding":
		default:
			continue
		}
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("applying %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

// ServiceAccountUser is the user name the API server gives the token of a ServiceAccount: the
// name RBAC's ServiceAccount subjects match.
func ServiceAccountUser(namespace, name string) string {
	return fmt.Sprintf("system:serviceaccount:%s:%s", namespace, name)
}

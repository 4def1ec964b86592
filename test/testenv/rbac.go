package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// ShippedRole is the ClusterRole in config/rbac/<file> as the release
// manifests ship it.
func ShippedRole(file string) (*rbacv1.ClusterRole, error) {
	raw, err := os.ReadFile(filepath.Join(ModuleRoot(), "config", "rbac", file))
	if err != nil {
		return nil, err
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(raw, role); err != nil {
		return nil, fmt.Errorf("config/rbac/%s: %w", file, err)
	}
	return role, nil
}

// BindUser creates role and a ClusterRoleBinding of the same name through
// c, and an envtest user of that name bound to nothing else: what a
// component running with only that role can do is what the user can do.
func BindUser(ctx context.Context, env *envtest.Environment, admin *rest.Config, c client.Client, role *rbacv1.ClusterRole, user string) (*envtest.AuthenticatedUser, error) {
	if err := c.Create(ctx, role); err != nil {
		return nil, err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	if err := c.Create(ctx, binding); err != nil {
		return nil, err
	}
	return env.AddUser(envtest.User{Name: user}, admin)
}

/** The users table's row and its JSON form (passwords never leave this layer). */

export interface UserRow {
  id: string;
  tenant_id: string;
  email: string;
  name: string;
  password_hash: string;
  role: string;
  is_active: boolean;
  created_at: Date;
  updated_at: Date;
}

export function userJson(u: UserRow, tenantName?: string) {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    role: u.role,
    tenant_id: u.tenant_id,
    ...(tenantName !== undefined ? { tenant_name: tenantName } : {}),
    is_active: u.is_active,
    created_at: u.created_at.toISOString(),
  };
}

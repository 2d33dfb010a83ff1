// A table's columns, written once per table (in its repository module): the list every
// statement selects or returns, bare or qualified by an alias for joins. Rows are read in
// this order (rowMode 'array'), so the row's tuple type follows the same list.
export interface Columns {
  /** `id, name, category_id, status` */
  readonly list: string;
  /** `p.id, p.name, p.category_id, p.status` */
  qualified(alias: string): string;
}

export function columns(names: readonly string[]): Columns {
  const list = names.join(', ');
  return { list, qualified: (alias) => names.map((name) => `${alias}.${name}`).join(', ') };
}

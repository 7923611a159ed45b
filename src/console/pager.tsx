/**
 * Previous / next through a paged list: which rows are shown ("21–40 of 57") between the two
 * buttons, each disabled at its end. The caller keeps the offset; `onOffset` asks for another.
 */
export function Pager({
  offset,
  size,
  total,
  label = 'Pages',
  onOffset,
}: {
  offset: number;
  size: number;
  total: number;
  label?: string;
  onOffset: (offset: number) => void;
}) {
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - size))}>
        Previous
      </button>
      <span>{total ? `${offset + 1}–${Math.min(offset + size, total)} of ${total}` : ''}</span>
      <button type="button" disabled={offset + size >= total} onClick={() => onOffset(offset + size)}>
        Next
      </button>
    </nav>
  );
}

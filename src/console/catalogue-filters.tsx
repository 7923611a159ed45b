/**
 * The filters above a catalogue (agents, tools): a category to pick and a text to search for,
 * each labelled, in a search landmark. The page decides what a filter does with the list.
 */
interface Props {
  /** Prefix of the inputs' ids (agent: agent-category, agent-search). */
  id: string;
  /** What is filtered, for the landmark's name ("agents"). */
  what: string;
  categories: string[];
  category: string;
  text: string;
  onCategory: (category: string) => void;
  onText: (text: string) => void;
}

export function CatalogueFilters({ id, what, categories, category, text, onCategory, onText }: Props) {
  return (
    <div class="filters" role="search" aria-label={`Filter ${what}`}>
      <div>
        <label for={`${id}-category`}>Category</label>
        <select id={`${id}-category`} value={category} onChange={(e) => onCategory(e.currentTarget.value)}>
          <option value="">All categories</option>
          {categories.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label for={`${id}-search`}>Search</label>
        <input id={`${id}-search`} type="search" value={text} onInput={(e) => onText(e.currentTarget.value)} />
      </div>
    </div>
  );
}

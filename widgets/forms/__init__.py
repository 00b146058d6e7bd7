"""Form fields that edit one value each, with the message a person sees when the input cannot be
taken.  `values` reads and writes what is typed, `fields` and `list_fields` are the editors (each
has `show_value(value)` and a `committed(object)` signal with the raw input), `binding` ties an
editor and its message line to a model object's field, `labels` names a field in words.
"""

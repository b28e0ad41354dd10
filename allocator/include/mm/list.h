/* SPDX-License-Identifier: MIT */
/*
 * list.h - intrusive doubly linked lists with the kernel's list.h names.
 * Written for this project; semantics as include/linux/list.h.
 */
#ifndef MM_LIST_H
#define MM_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct list_head {
	struct list_head *next, *prev;
};

#define LIST_HEAD_INIT(name) { &(name), &(name) }
/* The kernel's LIST_HEAD(name); renamed to stay clear of <sys/queue.h>. */
#define LIST_HEAD_DECL(name) struct list_head name = LIST_HEAD_INIT(name)
#define container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

static inline void INIT_LIST_HEAD(struct list_head *h)
{
	h->next = h;
	h->prev = h;
}

static inline void __list_add(struct list_head *n, struct list_head *prev,
			      struct list_head *next)
{
	next->prev = n;
	n->next = next;
	n->prev = prev;
	prev->next = n;
}

static inline void list_add(struct list_head *n, struct list_head *head)
{
	__list_add(n, head, head->next);
}

static inline void list_add_tail(struct list_head *n, struct list_head *head)
{
	__list_add(n, head->prev, head);
}

static inline void list_del(struct list_head *e)
{
	e->next->prev = e->prev;
	e->prev->next = e->next;
	e->next = NULL;     /* the kernel poisons; NULL faults just as well */
	e->prev = NULL;
}

static inline void list_del_init(struct list_head *e)
{
	e->next->prev = e->prev;
	e->prev->next = e->next;
	INIT_LIST_HEAD(e);
}

static inline bool list_empty(const struct list_head *h)
{
	return h->next == h;
}

static inline void list_move(struct list_head *e, struct list_head *head)
{
	e->next->prev = e->prev;
	e->prev->next = e->next;
	list_add(e, head);
}

static inline void list_move_tail(struct list_head *e, struct list_head *head)
{
	e->next->prev = e->prev;
	e->prev->next = e->next;
	list_add_tail(e, head);
}

/* Move all of @list to the front of @head; @list becomes empty. */
static inline void list_splice_init(struct list_head *list, struct list_head *head)
{
	if (list_empty(list))
		return;
	struct list_head *first = list->next, *last = list->prev, *at = head->next;
	first->prev = head;
	head->next = first;
	last->next = at;
	at->prev = last;
	INIT_LIST_HEAD(list);
}

#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_first_entry(head, type, member) list_entry((head)->next, type, member)
#define list_last_entry(head, type, member) list_entry((head)->prev, type, member)
#define list_for_each(pos, head) \
	for (pos = (head)->next; pos != (head); pos = pos->next)
#define list_for_each_safe(pos, n, head) \
	for (pos = (head)->next, n = pos->next; pos != (head); pos = n, n = pos->next)

#endif /* MM_LIST_H */

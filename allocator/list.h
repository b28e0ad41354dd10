/* SPDX-License-Identifier: MIT */
/* The intrusive list lives in the public headers (the bulk API takes one). */
#include "mm/list.h"
